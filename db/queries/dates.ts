/** A nullable time as the API shows it: an ISO string, or null. */
export function isoOrNull(at: Date | null): string | null {
  return at?.toISOString() ?? null;
}

/** A row's `createdAt` and `updatedAt` as the API shows them. */
export function stamps(row: { createdAt: Date; updatedAt: Date }) {
  return { createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}
