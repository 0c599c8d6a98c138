import { readFileSync } from 'node:fs';

/**
 * Where a V8 CPU profile (.cpuprofile, from the inspector or `--cpu-prof`) spent its samples:
 * self time by function and by owner (a package in node_modules, a Node internal, a project file,
 * garbage collection), as shares of the time the process was not idle.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileEntry {
  name: string;
  ms: number;
  /** Percent of the busy (non-idle) time. */
  percent: number;
}

export interface ProfileSummary {
  /** Wall time the profile covers and how much of it the main thread was busy, ms. */
  wallMs: number;
  busyMs: number;
  /** Self time by owner, busiest first. */
  byOwner: ProfileEntry[];
  /**
   * Each sample charged to the innermost package or project file on its stack, so the Node
   * internals and builtins a library calls (socket writes, streams) count as that library's.
   */
  byLibrary: ProfileEntry[];
  /** Self time by function, busiest first (`top` of them). */
  byFunction: ProfileEntry[];
  /** Inclusive time of the project's own functions (anything under `root` but node_modules). */
  projectInclusive: ProfileEntry[];
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

export function summarizeProfileFile(path: string, root: string, top = 20): ProfileSummary {
  return summarizeProfile(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile, root, top);
}

export function summarizeProfile(profile: CpuProfile, root: string, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Each sample's duration is the gap to the next sample (the last one runs to endTime).
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let t = profile.startTime;
  const times = deltas.map((d) => (t += d));
  for (let i = 0; i < samples.length; i++) {
    const duration = (i + 1 < times.length ? times[i + 1]! : profile.endTime) - times[i]!;
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + Math.max(0, duration) / 1000);
  }

  const wallMs = (profile.endTime - profile.startTime) / 1000;
  let idleMs = 0;
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const libraries = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    const owner = ownerOf(frame, root);
    owners.set(owner, (owners.get(owner) ?? 0) + ms);
    const fn = functionName(frame, root);
    functions.set(fn, (functions.get(fn) ?? 0) + ms);
    // Inclusive: charge every distinct project function on the stack once.
    const seen = new Set<string>();
    let library: string | null = null;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (library === null && f.url && !f.url.startsWith('node:')) library = ownerOf(f, root);
      if (!isProject(f.url, root)) continue;
      const name = functionName(f, root);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
    }
    library ??= SPECIAL.has(frame.functionName)
      ? frame.functionName
      : '(Node or V8 only: event loop, microtasks)';
    libraries.set(library, (libraries.get(library) ?? 0) + ms);
  }
  const busyMs = wallMs - idleMs;
  const entries = (map: Map<string, number>, n = Infinity) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, ms]) => ({ name, ms: round(ms), percent: round((100 * ms) / (busyMs || 1), 1) }));
  return {
    wallMs: round(wallMs),
    busyMs: round(busyMs),
    byOwner: entries(owners),
    byLibrary: entries(libraries),
    byFunction: entries(functions, top),
    projectInclusive: entries(inclusive, top),
  };
}

function isProject(url: string, root: string): boolean {
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(root) && !path.includes('/node_modules/');
}

function ownerOf(frame: ProfileNode['callFrame'], root: string): string {
  if (SPECIAL.has(frame.functionName) && !frame.url) return frame.functionName;
  const url = frame.url;
  if (!url) return '(native / V8 builtins)';
  if (url.startsWith('node:')) {
    // node:internal/http/..., node:net: grouped by the first path element after internal/.
    const parts = url.slice('node:'.length).split('/');
    return `node:${parts[0] === 'internal' && parts.length > 2 ? `internal/${parts[1]}` : parts.join('/')}`;
  }
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (path.startsWith(root)) return `drydock: ${path.slice(root.length).replace(/^\//, '')}`;
  return path;
}

function functionName(frame: ProfileNode['callFrame'], root: string): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  let where = frame.url.replace(/^file:\/\//, '');
  const nm = where.lastIndexOf('/node_modules/');
  if (nm >= 0) where = where.slice(nm + '/node_modules/'.length);
  else if (where.startsWith(root)) where = where.slice(root.length).replace(/^\//, '');
  // tsx's output keeps a module on one line: a line number there says nothing.
  return frame.lineNumber > 0 ? `${name} ${where}:${frame.lineNumber + 1}` : `${name} ${where}`;
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
