// The defaults come from huggingface_hub's environment variables and token file.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSettings } from '../src/settings.js';

let home: string;
beforeAll(async () => { home = await mkdtemp(join(tmpdir(), 'core-hub-home-')); });
afterAll(async () => { await rm(home, { recursive: true, force: true }); });

describe('the cache folder', () => {
  it('is HF_HUB_CACHE, else HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub', async () => {
    expect((await resolveSettings({ token: false }, { HF_HUB_CACHE: '/c/hub', HF_HOME: '/h' })).cacheDir).toBe('/c/hub');
    expect((await resolveSettings({ token: false }, { HF_HOME: '/h', XDG_CACHE_HOME: '/x' })).cacheDir).toBe('/h/hub');
    expect((await resolveSettings({ token: false }, { XDG_CACHE_HOME: '/x' })).cacheDir).toBe('/x/huggingface/hub');
    expect((await resolveSettings({ token: false }, {})).cacheDir).toBe(join(homedir(), '.cache', 'huggingface', 'hub'));
    expect((await resolveSettings({ token: false }, { HF_HOME: '~/hf' })).cacheDir).toBe(join(homedir(), 'hf', 'hub'));
  });

  it('is the cacheDir option first, made absolute', async () => {
    expect((await resolveSettings({ cacheDir: '/opt/cache', token: false }, { HF_HUB_CACHE: '/c' })).cacheDir).toBe('/opt/cache');
    expect((await resolveSettings({ cacheDir: 'rel', token: false }, {})).cacheDir).toBe(join(process.cwd(), 'rel'));
  });
});

describe('the endpoint', () => {
  it('is the option, else HF_ENDPOINT, else https://huggingface.co, without a trailing /', async () => {
    expect((await resolveSettings({ token: false }, {})).endpoint).toBe('https://huggingface.co');
    expect((await resolveSettings({ token: false }, { HF_ENDPOINT: 'https://hf-mirror.com/' })).endpoint).toBe('https://hf-mirror.com');
    expect((await resolveSettings({ endpoint: 'http://127.0.0.1:1', token: false }, { HF_ENDPOINT: 'https://x' })).endpoint).toBe('http://127.0.0.1:1');
    await expect(resolveSettings({ token: false }, { HF_ENDPOINT: 'hf-mirror.com' })).rejects.toThrow(/HF_ENDPOINT must be an http\(s\) address/);
  });
});

describe('the token', () => {
  it('is the option, else HF_TOKEN, else the token file HF_TOKEN_PATH or HF_HOME/token; false means none', async () => {
    await writeFile(join(home, 'token'), 'hf_from_file\n');
    await writeFile(join(home, 'other-token'), 'hf_from_path');
    expect((await resolveSettings({ token: 'hf_option' }, { HF_TOKEN: 'hf_env' })).token).toBe('hf_option');
    expect((await resolveSettings({}, { HF_TOKEN: ' hf_env ', HF_HOME: home })).token).toBe('hf_env');
    expect((await resolveSettings({}, { HF_HOME: home })).token).toBe('hf_from_file');
    expect((await resolveSettings({}, { HF_HOME: home, HF_TOKEN_PATH: join(home, 'other-token') })).token).toBe('hf_from_path');
    expect((await resolveSettings({ token: false }, { HF_TOKEN: 'hf_env', HF_HOME: home })).token).toBeUndefined();
    expect((await resolveSettings({}, { HF_HOME: join(home, 'nothing-here') })).token).toBeUndefined();
  });
});

describe('offline mode', () => {
  it('is the option, else HF_HUB_OFFLINE set to 1, ON, YES or TRUE (any case)', async () => {
    for (const v of ['1', 'on', 'YES', 'True']) expect((await resolveSettings({ token: false }, { HF_HUB_OFFLINE: v })).offline, v).toBe(true);
    for (const v of ['0', '', 'no', undefined]) expect((await resolveSettings({ token: false }, { HF_HUB_OFFLINE: v })).offline, String(v)).toBe(false);
    expect((await resolveSettings({ token: false, offline: false }, { HF_HUB_OFFLINE: '1' })).offline).toBe(false);
  });
});
