import { STATUS_CODES, maxHeaderSize, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { RequestError } from '@hono/node-server';
import { ERROR_STATUS } from '../domain/errors';
import { errorBody } from './errors';
import { newRequestId } from './request-id';

type ParserError = Error & { code?: string; rawPacket?: Buffer };

/**
 * Why Node's HTTP parser refused a request before the app saw it. The answer is INVALID_INPUT with
 * its one status, 400, like every other refusal of input: clients read the code, not a transport status.
 */
function reasonOf(error: ParserError, requestTimeoutMs: number): string {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // Still inside the request line (a method, then no line end): the URL is what is too long.
    const packet = error.rawPacket?.toString('latin1') ?? '';
    return /^[A-Z]+ /.test(packet) && !packet.includes('\r\n')
      ? `the request line (URL) is over ${maxHeaderSize} bytes`
      : `the request line and headers are over ${maxHeaderSize} bytes`;
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return `the request (headers and body) took over ${requestTimeoutMs} ms`;
  }
  return 'malformed HTTP request';
}

/**
 * The server's `clientError` handler: instead of Node's bare status line (or a reset), the client
 * gets the error envelope with a request id, as for any other refusal, and the connection closes
 * without reading further.
 */
export function clientErrorHandler(requestTimeoutMs: number) {
  return (error: ParserError, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = newRequestId();
    const body = JSON.stringify(errorBody('INVALID_INPUT', reasonOf(error, requestTimeoutMs), {}, requestId));
    socket.end(
      [
        `HTTP/1.1 ${ERROR_STATUS.INVALID_INPUT} ${STATUS_CODES[ERROR_STATUS.INVALID_INPUT]}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
      () => socket.destroy(),
    );
  };
}

/**
 * The answer to a request hono's Node adapter could not make a URL of — no `Host` header, a `Host`
 * that is not `host[:port]`, a request target it does not serve — in the envelope with a request
 * id, as any other refusal (the adapter's own answer is a bare 400).
 */
export function requestErrorAnswer(error: unknown): Response {
  const requestId = newRequestId();
  const message =
    error instanceof RequestError ? requestErrorReason(error.message) : 'malformed HTTP request';
  return new Response(JSON.stringify(errorBody('INVALID_INPUT', message, {}, requestId)), {
    status: ERROR_STATUS.INVALID_INPUT,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, connection: 'close' },
  });
}

function requestErrorReason(adapterMessage: string): string {
  if (adapterMessage === 'Missing host header') return 'the request has no Host header';
  if (adapterMessage === 'Invalid host header')
    return 'the Host header is not a host name or address (host[:port])';
  if (adapterMessage === 'Invalid URL') return 'the Host header and the request target do not make a URL';
  return `the request target is not one this server serves (${adapterMessage})`;
}
