import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join as joinPath } from 'node:path';
import { BIN } from './cli';

/** Running a runbook page as written: its fenced blocks, and bash to run them in. */

export interface Fence {
  lang: string;
  code: string;
  line: number;
}

/** The fenced blocks of a Markdown file; a fence indented in a list item loses its indent. */
export function fencedBlocks(markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const blocks: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, lang] = open as unknown as [string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^ *```\s*$/.test(lines[j]!); j++) {
      const line = lines[j]!;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    if (j === lines.length) throw new Error(`unclosed fence at line ${i + 1}`);
    blocks.push({ lang, code: body.join('\n'), line: i + 1 });
    i = j;
  }
  return blocks;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function bash(script: string, env: NodeJS.ProcessEnv, cwd: string, timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A fenced block and the `##` or `###` heading it sits under ('' before the first one). */
export interface SectionFence extends Fence {
  section: string;
}

/** The fenced blocks of a Markdown file, each with its section: for a page whose cases run apart. */
export function sectionedBlocks(markdown: string): SectionFence[] {
  const lines = markdown.split('\n');
  return fencedBlocks(markdown).map((block) => {
    let section = '';
    let fenced = false;
    for (const line of lines.slice(0, block.line - 1)) {
      if (/^ *```/.test(line)) fenced = !fenced;
      else if (!fenced) section = /^#{2,3} (.+)$/.exec(line)?.[1] ?? section;
    }
    return { ...block, section };
  });
}

/**
 * The environment an operator's shell has in `dir`: `drydock` on PATH the way npm installs the
 * package's bin (a link to bin/drydock.mjs, made once), a home of its own, UTF-8, and `vars`.
 */
export function operatorEnv(dir: string, vars: Record<string, string>): NodeJS.ProcessEnv {
  const bin = joinPath(dir, 'bin');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    symlinkSync(BIN, joinPath(bin, 'drydock'));
  }
  return {
    PATH: [bin, dirname(process.execPath), process.env.PATH].join(':'),
    HOME: dir,
    LANG: 'C.UTF-8',
    ...vars,
  };
}
