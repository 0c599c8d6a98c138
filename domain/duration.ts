const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `0`, or a number and a unit: `90s`, `10m`, `2h`, `1.5d`. */
export const DURATION_PATTERN = /^(?:0|(\d+(?:\.\d+)?)(ms|s|m|h|d))$/;

/** Milliseconds of a duration string such as `90s`, `10m`, `2h`, `1.5d`; null when malformed. */
export function parseDuration(text: string): number | null {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return null;
  if (match[1] === undefined) return 0;
  return Math.round(Number(match[1]) * UNITS[match[2]!]!);
}

/** A duration in words for messages: `90 s`, `2 min`, `1.5 h`. */
export function spokenDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${+(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${+(ms / 60_000).toFixed(1)} min`;
  return `${+(ms / 3_600_000).toFixed(1)} h`;
}
