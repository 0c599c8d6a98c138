import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The reference lives in the repository: every relative link of the README and docs/ reaches a
 * file (and its heading, when it names one), and nothing points at documents a clone lacks.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, -1 for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

const pages = [
  join(ROOT, 'README.md'),
  join(ROOT, 'packages/client/README.md'),
  ...markdownFiles(join(ROOT, 'docs')),
];

describe('the docs', () => {
  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of prose(readFileSync(page, 'utf8')).matchAll(
        /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g,
      )) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        const where = `${relative(ROOT, page)} → ${target}`;
        if (!existsSync(file)) {
          broken.push(`${where}: no such file`);
        } else if (anchor && (!file.endsWith('.md') || !anchorsOf(readFileSync(file, 'utf8')).has(anchor))) {
          broken.push(`${where}: no such heading`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('are the only reference: no tracked file points outside the repository for it', () => {
    // The product notes a clone does not hold; spelled in pieces so that this file does not match itself.
    const outside = new RegExp(
      [
        String.raw`\.\./` + 'shared',
        String.raw`\bspec/[\w-]+\.md`,
        String.raw`\b(?:DESIGN|ENGINEERING|STYLE)` + String.raw`\.md`,
      ].join('|'),
    );
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && !f.startsWith('node_modules/') && f !== 'package-lock.json');
    const mentions: string[] = [];
    for (const file of tracked) {
      const path = join(ROOT, file);
      if (!existsSync(path) || statSync(path).isDirectory()) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (outside.test(line)) mentions.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(mentions).toEqual([]);
  });
});
