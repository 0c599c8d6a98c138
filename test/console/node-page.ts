import { expect } from 'vitest';
import { csrfOf, unescapeHtml, type Browser, type Page } from './console-client';

/** The HTML of the page's form posting to `action` (its first), or undefined when it has none. */
export function formHtml(page: Page, action: string): string | undefined {
  const parts = page.html.split(`action="${action}"`);
  return parts.length > 1 ? parts[1]!.split('</form>')[0] : undefined;
}

/** The hidden fields of the page's form posting to `action`, as it would send them. */
export function hiddenFields(page: Page, action: string): Record<string, string> {
  const form = formHtml(page, action);
  if (form === undefined) throw new Error(`no form posting to ${action}`);
  const fields: Record<string, string> = {};
  for (const match of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[match[1]!] = unescapeHtml(match[2]!);
  }
  return fields;
}

/** A field's value as the page's form posting to `action` fills it in (hidden or not). */
export function valueOf(page: Page, action: string, name: string): string {
  const form = formHtml(page, action) ?? '';
  const match = new RegExp(`name="${name}"[^>]*? value="([^"]*)"`).exec(form);
  if (!match) throw new Error(`no field ${name} in the form of ${action}`);
  return unescapeHtml(match[1]!);
}

/** The node page's link to the page of `control` (its Actions menu, a suggested action). */
export const linkTo = (nodeId: string, control: string) => `href="/console/nodes/${nodeId}/${control}"`;

/**
 * Opens a control's page from the node page, as a person would: the node page must link to it;
 * the control's page must carry its form. Answers that page.
 */
export async function openControl(browser: Browser, nodeId: string, control: string): Promise<Page> {
  const node = await browser.get(`/console/nodes/${nodeId}`);
  expect(node.html, control).toContain(linkTo(nodeId, control));
  const page = await browser.get(`/console/nodes/${nodeId}/${control}`);
  expect(page.status, control).toBe(200);
  expect(formHtml(page, `/console/nodes/${nodeId}/${control}`), control).toBeDefined();
  return page;
}

/**
 * Sends a control's page's form with `fields` typed in (its hidden fields as they are: the CSRF
 * token, the node version, `confirm`); answers the redirect.
 */
export async function sendControl(
  browser: Browser,
  page: Page,
  nodeId: string,
  control: string,
  fields: Record<string, string> = {},
): Promise<Page> {
  const action = `/console/nodes/${nodeId}/${control}`;
  return browser.post(action, { ...hiddenFields(page, action), csrf: csrfOf(page), ...fields });
}
