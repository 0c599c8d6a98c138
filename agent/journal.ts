import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * One step of a command the agent handled. Several lines may name one command; the last one is
 * where it stands: `started` (an action began and has no outcome yet), then `acked` or `refused` —
 * or, for a `run` command, `finished` (its status and exit code; its output kept beside the
 * journal until the API has it).
 */
export interface JournalEntry {
  id: string;
  kind: string;
  outcome: 'started' | 'acked' | 'refused' | 'finished';
  /** How a finished `run` command ended. */
  status?: 'succeeded' | 'failed';
  exitCode?: number | null;
  reason?: string;
  /** The action a `remediate` command ran. */
  action?: string;
  /** An acked action that restarts the machine: the next start reports that it came back. */
  restarts?: true;
  /** When the API heard that the machine came back from this restarting action. */
  returnedAt?: string;
  at: string;
}

/**
 * What the agent has done. An outcome is written once decided and before the API hears it, and an
 * action is written `started` before it runs, so a command delivered again (the report was lost,
 * the agent restarted) is answered from here and never carried out twice.
 */
export interface Journal {
  /** Every entry, oldest first. */
  readonly entries: readonly JournalEntry[];
  /** Where command `id` stands: its last entry. */
  find(id: string): JournalEntry | undefined;
  append(entry: JournalEntry): void;
}

export class MemoryJournal implements Journal {
  readonly entries: JournalEntry[] = [];
  private readonly byId = new Map<string, JournalEntry>();

  find(id: string): JournalEntry | undefined {
    return this.byId.get(id);
  }

  append(entry: JournalEntry): void {
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
  }
}

/** `DIR/journal.jsonl`: one JSON line per step of a command handled (mode 0600). */
export class FileJournal extends MemoryJournal {
  constructor(private readonly file: string) {
    super();
    if (!existsSync(file)) return;
    const text = readFileSync(file, 'utf8');
    // End a torn last line, so the next entry starts a line of its own.
    if (text && !text.endsWith('\n')) appendFileSync(file, '\n');
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const entry = JSON.parse(line) as JournalEntry;
        if (typeof entry.id === 'string') super.append(entry);
      } catch {
        // A line torn by a crash mid-write: the command it named is delivered again and handled.
      }
    }
  }

  override append(entry: JournalEntry): void {
    // Synchronous: the line is on disk before the outcome is reported.
    appendFileSync(this.file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    super.append(entry);
  }
}
