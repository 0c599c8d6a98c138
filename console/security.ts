import { createMiddleware } from 'hono/factory';

/**
 * The headers of every console answer: a Content-Security-Policy that allows this origin's own
 * stylesheet and forms only (no inline script or style, nothing from elsewhere), no framing, no
 * referrer, no sniffing, no caching of pages that show a fleet.
 */
export const securityHeaders = createMiddleware(async (c, next) => {
  // Set before the page is made, so each answer is made with them: set after, each would re-make
  // the finished answer around its body (turning a page's text into a stream, four times).
  c.header(
    'Content-Security-Policy',
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; " +
      "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  );
  c.header('X-Frame-Options', 'DENY');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Cache-Control', 'no-store');
  await next();
});
