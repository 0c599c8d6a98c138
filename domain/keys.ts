/** How long a rotated API key's old secret keeps working when the caller does not say. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 3600;
/** The longest grace a rotation may give the old secret: rotation is not a way to keep two keys. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 86_400;
