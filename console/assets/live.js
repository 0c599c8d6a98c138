/* global document, location, CSS, DOMParser */
/*
 * Live updates of a console page (docs/console.md, "Live updates"). A page with `body[data-watch]`
 * (the event feed's filters it follows) loops on GET /console/live; when something it watches
 * happened, or every few seconds while a region is `data-live-busy`, it reads its own URL again
 * in the background and replaces each `[data-live][id]` element by its namesake in the new copy.
 * No reload: scroll, focus and half-typed form fields stay as they are.
 */
(() => {
  const watchText = document.body.dataset.watch;
  if (watchText === undefined) return;
  const watch = new URLSearchParams(watchText);

  /** The cause of a stop: the session ended, or the page or endpoint refused for good. */
  class Stop extends Error {}

  const indicator = document.createElement('span');
  indicator.className = 'live-status';
  indicator.setAttribute('role', 'status');
  (document.querySelector('header nav') ?? document.querySelector('header') ?? document.body).append(
    indicator,
  );
  const show = (state, text, title) => {
    indicator.dataset.state = state;
    indicator.textContent = text;
    indicator.title = title;
  };

  /** An answer of ours that is not the page or JSON asked for: signed out, or a refusal. */
  function check(response, what) {
    if (response.type === 'opaqueredirect' || response.status === 303) {
      throw new Stop('signed out');
    }
    if (response.status >= 400 && response.status < 500 && response.status !== 429) {
      throw new Stop(`${what} answered ${response.status}`);
    }
    if (!response.ok) throw new Error(`${what} answered ${response.status}`);
    return response;
  }

  /** One long-poll of the feed: `{ after, changed }`. */
  async function ask(after, busy) {
    const query = new URLSearchParams(watch);
    if (after !== null) query.set('after', after);
    if (busy) query.set('busy', '1');
    const response = await fetch(`/console/live?${query}`, {
      redirect: 'manual',
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
    });
    return check(response, 'the live endpoint').json();
  }

  /** Whether `region` holds the element being typed into. */
  function typingIn(region) {
    const active = document.activeElement;
    return (
      active !== null &&
      region.contains(active) &&
      ['INPUT', 'TEXTAREA', 'SELECT'].includes(active.tagName) &&
      active.type !== 'submit'
    );
  }

  /** Copies what the user typed into `from`'s fields onto the same fields of `to`. */
  function keepTyped(from, to) {
    for (const field of from.querySelectorAll('input, textarea, select')) {
      if (!field.name || field.type === 'hidden' || field.type === 'submit') continue;
      const edited =
        field.type === 'checkbox' || field.type === 'radio'
          ? field.checked !== field.defaultChecked
          : field.tagName === 'SELECT'
            ? [...field.options].some((o) => o.selected !== o.defaultSelected)
            : field.value !== field.defaultValue;
      if (!edited) continue;
      const action = field.form?.getAttribute('action') ?? '';
      for (const twin of to.querySelectorAll(`[name="${CSS.escape(field.name)}"]`)) {
        if ((twin.form?.getAttribute('action') ?? '') !== action || twin.type !== field.type) continue;
        if (field.type === 'checkbox' || field.type === 'radio') twin.checked = field.checked;
        else twin.value = field.value;
      }
    }
  }

  /** Keeps open in `to` each menu (`<details>`) the user opened in `from`, matched by its place. */
  function keepOpen(from, to) {
    const opened = [...from.querySelectorAll('details')].map((details) => details.open);
    [...to.querySelectorAll('details')].forEach((details, i) => {
      if (opened[i]) details.open = true;
    });
  }

  /** Each region's markup as the server last rendered it, by id. */
  const rendered = new Map(
    [...document.querySelectorAll('[data-live][id]')].map((region) => [region.id, region.outerHTML]),
  );

  /** Reads the page again and swaps in the live regions that changed. */
  async function refresh() {
    const response = await fetch(location.href, {
      redirect: 'manual',
      credentials: 'same-origin',
      headers: { 'x-drydock-live': '1' },
    });
    const fresh = new DOMParser().parseFromString(await check(response, 'the page').text(), 'text/html');
    for (const region of document.querySelectorAll('[data-live][id]')) {
      const twin = fresh.getElementById(region.id);
      // Unchanged since the server last rendered it: left alone (a click on it is not lost).
      if (!twin || rendered.get(region.id) === twin.outerHTML || typingIn(region)) continue;
      rendered.set(region.id, twin.outerHTML);
      keepTyped(region, twin);
      keepOpen(region, twin);
      region.replaceWith(document.adoptNode(twin));
    }
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function run() {
    let after = null;
    let backoff = 1000;
    for (;;) {
      try {
        if (after === null) {
          // Start from the feed's cursor of now, and read the page once more for what happened
          // between the page's read and that moment.
          after = (await ask(null, false)).after;
          await refresh();
        }
        show('live', 'live', 'This page updates itself as the fleet changes.');
        const busy = document.querySelector('[data-live-busy]') !== null;
        const answer = await ask(after, busy);
        after = answer.after;
        if (answer.changed || busy) await refresh();
        backoff = 1000;
      } catch (error) {
        if (error instanceof Stop) {
          if (error.message === 'signed out') {
            show('stopped', 'signed out', 'This session has ended: sign in again to see changes.');
          } else {
            show('stopped', 'live updates stopped', `Not updating: ${error.message}. Reload the page.`);
          }
          return;
        }
        show('paused', 'paused', `Not updating (${error.message}); trying again.`);
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  void run();
})();
