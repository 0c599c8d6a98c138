/** The most intervals [created, completed) that overlap at one moment. */
export function mostAtOnce(ops: { createdAt: Date; completedAt: Date | null }[]): number {
  const marks = ops.flatMap((op) => [
    { at: op.createdAt.getTime(), step: 1 },
    { at: (op.completedAt ?? new Date(8.64e15)).getTime(), step: -1 },
  ]);
  // An end and a start at the same instant: the end first.
  marks.sort((a, b) => a.at - b.at || a.step - b.step);
  let running = 0;
  let most = 0;
  for (const mark of marks) most = Math.max(most, (running += mark.step));
  return most;
}
