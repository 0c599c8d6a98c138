import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

describe('loadConfig', () => {
  it('takes a variable set to the empty string as unset: its default applies', () => {
    const config = loadConfig({ PORT: '', TEMPORAL_CLI: '', DRYDOCK_TRUSTED_PROXIES: '' });
    expect(config.PORT).toBe(loadConfig({}).PORT);
    expect(config.TEMPORAL_CLI).toBeUndefined();
    expect(config.DRYDOCK_TRUSTED_PROXIES).toEqual([]);
  });

  it('still refuses a value that is set and wrong, naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });
});
