import { createContext, useContext } from 'hono/jsx';

/**
 * The moment a page is rendered (ms since the epoch), which every relative time on it is counted
 * from: the Layout provides it once per page, so all of a page's times agree; a test provides its
 * own to render the same words every time.
 */
export const RenderedAt = createContext<number | null>(null);

/**
 * A time as people read it on call — `42 s ago`, `in 5 min` — in a `<time>` that carries the exact
 * instant (`datetime`) and shows it in UTC on hover (`title`). `at` is an RFC 3339 time.
 */
export function When(props: { at: string }) {
  const now = useContext(RenderedAt) ?? Date.now();
  const at = Date.parse(props.at);
  return (
    <time datetime={props.at} title={utc(at)}>
      {relative(at, now)}
    </time>
  );
}

/** `at`, to the second, in UTC: `2026-12-03 16:50:24 UTC`. */
export function utc(at: number): string {
  return `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** How far `at` is from `now` in the largest unit that reads well: `42 s ago`, `3 h ago`, `in 2 d`. */
export function relative(at: number, now: number): string {
  const seconds = Math.round((now - at) / 1000);
  const span = amount(Math.abs(seconds));
  return seconds >= 0 ? `${span} ago` : `in ${span}`;
}

function amount(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}
