const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** Milliseconds of a duration string such as `90s`, `10m`, `2h`, `1.5d`; null when malformed. */
export function parseDuration(text: string): number | null {
  if (text === '0') return 0;
  const match = DURATION.exec(text);
  if (!match) return null;
  return Math.round(Number(match[1]) * UNITS[match[2]!]!);
}
