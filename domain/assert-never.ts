/**
 * The last line of an exhaustive switch: a new case that no branch handles is a compile error
 * here, and a value from outside the types (an old row, a bad cast) a loud throw, not a silent default.
 */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
