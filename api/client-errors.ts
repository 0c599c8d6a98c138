import { STATUS_CODES, maxHeaderSize, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from './errors';
import { newRequestId } from './request-id';

type ParserError = Error & { code?: string; rawPacket?: Buffer };

/** The answer to a request Node's HTTP parser refused before the app saw it. */
function classify(error: ParserError, requestTimeoutMs: number): { status: number; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    // Still inside the request line (a method, then no line end): the URL is what is too long.
    const packet = error.rawPacket?.toString('latin1') ?? '';
    return /^[A-Z]+ /.test(packet) && !packet.includes('\r\n')
      ? { status: 414, message: `the request line (URL) is over ${maxHeaderSize} bytes` }
      : { status: 431, message: `the request line and headers are over ${maxHeaderSize} bytes` };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, message: `the request (headers and body) took over ${requestTimeoutMs} ms` };
  }
  return { status: 400, message: 'malformed HTTP request' };
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
    const { status, message } = classify(error, requestTimeoutMs);
    const requestId = newRequestId();
    const body = JSON.stringify(errorBody('INVALID_INPUT', message, {}, requestId));
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
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
