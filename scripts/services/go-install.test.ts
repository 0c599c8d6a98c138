import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatElapsed, formatGoBuildStatus, GoBuildProgress, progressLines } from './go-install';

/**
 * The first lines `go install -v github.com/temporalio/cli/cmd/temporal@v1.5.1` wrote on this
 * machine with empty caches: the modules it fetched, then the packages as it began each.
 */
const RECORDED = readFileSync('test/fixtures/go-install-v.txt', 'utf8').split('\n').filter(Boolean);
const DOWNLOADS = RECORDED.filter((line) => line.startsWith('go: downloading')).length;

/** The recorded lines fed one a second from `started`; the progress after `count` of them. */
function fed(count: number, started = 1_000_000) {
  const progress = new GoBuildProgress(started);
  RECORDED.slice(0, count).forEach((line) => progress.line(line));
  return progress.status(started + count * 1_000);
}

describe("a Go build's progress, from what `go install -v` writes", () => {
  it('says what it does before the first line (all that a build with a full cache shows)', () => {
    expect(formatGoBuildStatus('the Temporal CLI', fed(0))).toBe(
      'building the Temporal CLI: 0s, resolving modules, reading the build cache',
    );
  });

  it('counts the modules it fetches and names the one it fetches now', () => {
    expect(DOWNLOADS).toBe(12);
    const status = fed(3);
    expect(status).toEqual({
      elapsedMs: 3_000,
      downloaded: 3,
      compiled: 0,
      current: 'github.com/BurntSushi/toml v1.4.0',
    });
    expect(formatGoBuildStatus('the Temporal CLI', status)).toBe(
      'building the Temporal CLI: 3s, 3 modules downloaded, now downloading github.com/BurntSushi/toml v1.4.0',
    );
  });

  it('then counts the packages it compiles and names the one it compiles now', () => {
    const status = fed(RECORDED.length);
    expect(status).toMatchObject({ downloaded: 12, compiled: RECORDED.length - 12 });
    expect(status.current).toBe(RECORDED.at(-1));
    expect(formatGoBuildStatus('the Temporal CLI', status)).toBe(
      `building the Temporal CLI: 1m17s, 12 modules downloaded, 65 packages compiled, now compiling ${RECORDED.at(-1)}`,
    );
  });

  it('keeps what is neither a download nor a package as what went wrong, and counts it as neither', () => {
    const progress = new GoBuildProgress(0);
    for (const line of [
      'internal/abi',
      '# go.temporal.io/server/common',
      'common/util.go:12:2: undefined: nope',
      'go: downloading go.temporal.io/api v1.49.1',
    ]) {
      progress.line(line);
    }
    expect(progress.status(0)).toMatchObject({ downloaded: 1, compiled: 1 });
    expect(progress.messages()).toEqual([
      '# go.temporal.io/server/common',
      'common/util.go:12:2: undefined: nope',
    ]);
  });

  it('writes elapsed time as seconds, then minutes and seconds', () => {
    expect([0, 5_400, 59_999, 60_000, 65_000, 6 * 60_000 + 1_000].map(formatElapsed)).toEqual([
      '0s',
      '5s',
      '59s',
      '1m00s',
      '1m05s',
      '6m01s',
    ]);
  });

  it('off a terminal, writes a plain line every 30 s, not one a second', () => {
    const lines: string[] = [];
    const report = progressLines('the Temporal CLI', (line) => lines.push(line));
    for (let second = 0; second <= 95; second++) {
      report({
        elapsedMs: second * 1_000,
        downloaded: 12,
        compiled: second,
        current: 'go.temporal.io/api/common/v1',
      });
    }
    expect(lines).toEqual([
      'building the Temporal CLI: 30s, 12 modules downloaded, 30 packages compiled, now compiling go.temporal.io/api/common/v1',
      'building the Temporal CLI: 1m00s, 12 modules downloaded, 60 packages compiled, now compiling go.temporal.io/api/common/v1',
      'building the Temporal CLI: 1m30s, 12 modules downloaded, 90 packages compiled, now compiling go.temporal.io/api/common/v1',
    ]);
  });
});
