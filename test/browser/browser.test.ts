import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBrowser } from '../support/browser';

/**
 * The browser tests' claim that a page "works offline" rests on the cut: a request to another
 * host is aborted and recorded, one to this machine goes through.
 */
describe('the test browser', () => {
  const b = useBrowser();
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/local.js') {
        response.writeHead(200, { 'content-type': 'text/javascript' });
        response.end("document.getElementById('local').textContent = 'local script ran';");
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        '<p id="local">local script did not run</p><p id="outside">outside script did not run</p>' +
          '<script src="/local.js"></script>' +
          '<script src="https://cdn.example.com/outside.js"></script>',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('lets requests to 127.0.0.1 through and aborts and records every other one', async () => {
    await b.page.goto(`${origin}/`);
    await b.page.getByText('local script ran').waitFor();
    expect(await b.page.locator('#outside').textContent()).toBe('outside script did not run');
    expect(b.blocked).toEqual(['https://cdn.example.com/outside.js']);
  });

  it('starts every test with a new context and an empty record', async () => {
    expect(b.blocked).toEqual([]);
    expect(await b.context.cookies()).toEqual([]);
    await b.page.goto(`${origin}/`);
    await b.page.getByText('local script ran').waitFor();
    expect(b.blocked).toEqual(['https://cdn.example.com/outside.js']);
  });
});
