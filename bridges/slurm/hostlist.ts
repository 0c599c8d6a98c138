/**
 * Expands a Slurm hostlist (`gpu-b7-[01-03,07],login1`) into its names, zero padding kept. A name
 * with no brackets is itself. One bracket per name, as squeue prints them.
 */
export function expandHostlist(list: string): string[] {
  const names: string[] = [];
  for (const part of splitTopLevel(list)) {
    const open = part.indexOf('[');
    if (open < 0) {
      if (part !== '') names.push(part);
      continue;
    }
    const close = part.indexOf(']', open);
    if (close < 0) throw new Error(`hostlist '${list}': '[' without ']'`);
    const prefix = part.slice(0, open);
    const suffix = part.slice(close + 1);
    for (const range of part.slice(open + 1, close).split(',')) {
      const [from, to = from] = range.split('-') as [string, string?];
      if (!/^\d+$/.test(from) || !/^\d+$/.test(to))
        throw new Error(`hostlist '${list}': bad range '${range}'`);
      for (let n = Number(from); n <= Number(to); n++) {
        names.push(`${prefix}${String(n).padStart(from.length, '0')}${suffix}`);
      }
    }
  }
  return names;
}

/** Splits on the commas outside brackets. */
function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === '[') depth++;
    else if (list[i] === ']') depth--;
    else if (list[i] === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts;
}
