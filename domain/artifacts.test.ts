import { describe, expect, it } from 'vitest';
import { ARTIFACT_ID, artifactPathFault, copyRefusal } from './artifacts';
import { PROVISION_STATES } from './provision';

describe('artifact ids', () => {
  it('take letters, digits and . _ : -, starting with a letter or digit, up to 128', () => {
    for (const id of ['llama-3.1-70b', 'sha256:9f86d081884c', 'W', 'set_2024.v2', 'a'.repeat(128)]) {
      expect(ARTIFACT_ID.test(id), id).toBe(true);
    }
    for (const id of ['', '.', '..', '-x', '_x', 'a/b', 'a b', 'ü', 'a%2F', 'a\u0000', 'a'.repeat(129)]) {
      expect(ARTIFACT_ID.test(id), id).toBe(false);
    }
  });
});

describe('artifact paths', () => {
  it('are absolute, with no empty, . or .. segment', () => {
    for (const path of ['/data/w', '/x', '/data/models/llama-3.1/..hidden', '/data/.cache/w', '/机架 7/w']) {
      expect(artifactPathFault(path), path).toBeNull();
    }
    expect(artifactPathFault('data/w')).toMatch(/absolute/);
    expect(artifactPathFault('')).toMatch(/absolute/);
    for (const path of ['/', '/data//w', '/data/w/', '//data']) {
      expect(artifactPathFault(path), path).toMatch(/empty segment/);
    }
    for (const path of ['/.', '/..', '/data/./w', '/data/../etc', '/data/w/..']) {
      expect(artifactPathFault(path), path).toMatch(/\. or \.\. segment/);
    }
  });
});

describe('copyRefusal', () => {
  it('refuses a deleted node and one turned away or on its way out; takes every other', () => {
    const refused = PROVISION_STATES.filter((state) =>
      copyRefusal({ provisionState: state, deletedAt: null }),
    );
    expect(refused).toEqual(['rejected', 'purging', 'decommissioning', 'decommissioned']);
    expect(copyRefusal({ provisionState: 'adopted', deletedAt: new Date() })).toBe('the node is deleted');
    expect(copyRefusal({ provisionState: 'purging', deletedAt: null })).toBe('the node is purging');
  });
});
