// resolvePretrained through @core/hub against the fake Hub of @core/hub's tests, on 127.0.0.1.
import '@core/backend-cpu';
import { RepositoryNotFoundError, type DownloadProgress } from '@core/hub';
import { nn } from '@core/nn';
import { randn, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { commitOf } from '../../hub/test/helpers/fake-hub.js';
import { startHub } from '../../hub/test/helpers/setup.js';
import { loadPretrainedWeights, resolvePretrained } from '../src/index.js';

class Net extends nn.Module<[Tensor], Tensor> {
  proj = new nn.Linear(3, 2);
  forward(x: Tensor): Tensor {
    return this.proj.forward(x);
  }
}

const weights = { 'proj.weight': randn([2, 3]), 'proj.bias': randn([2]) };
const COMMIT = commitOf('first');
const files = {
  'config.json': JSON.stringify({ model_type: 'net', hidden_size: 3 }),
  'generation_config.json': '{}',
  'model.safetensors': nn.serializeSafetensors(weights),
  'tokenizer.json': '{}',
  'tokenizer_config.json': '{}',
  'special_tokens_map.json': '{}',
  'README.md': '# net',
  'pytorch_model.bin': new Uint8Array([1, 2, 3]),
  'onnx/model.onnx': 'onnx',
};

describe('resolvePretrained from a Hub repo', () => {
  it('downloads only config, safetensors and tokenizer files into the cache, and the weights load from there', async () => {
    const fixture = await startHub([{ id: 'org/net', commits: { [COMMIT]: files }, refs: { main: COMMIT } }]);
    const progress = new Set<string>();
    const { dir, config } = await resolvePretrained('org/net', { ...fixture.options, onProgress: (p: DownloadProgress) => progress.add(p.file) });

    expect(dir).toBe(`${fixture.repoDir('org/net')}/snapshots/${COMMIT}`);
    expect(config).toEqual({ model_type: 'net', hidden_size: 3 });
    expect(await fixture.list(dir)).toEqual([
      'config.json', 'generation_config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json',
    ]);
    expect(progress.has('model.safetensors')).toBe(true);

    const model = new Net();
    await loadPretrainedWeights(model, dir);
    expect([...(await model.proj.weight.data())]).toEqual([...(await weights['proj.weight'].data())]);

    // Offline, the cached snapshot is used without asking the Hub.
    const requests = fixture.hub.requests.length;
    expect((await resolvePretrained('org/net', { ...fixture.options, offline: true })).dir).toBe(dir);
    expect(fixture.hub.requests.length).toBe(requests);
  });

  it('passes the revision and the token to the Hub', async () => {
    const second = commitOf('second');
    const fixture = await startHub([{
      id: 'org/private', token: 'hf_secret', refs: { main: second, v1: COMMIT },
      commits: { [COMMIT]: files, [second]: { ...files, 'config.json': '{"v":2}' } },
    }]);
    await expect(resolvePretrained('org/private', fixture.options)).rejects.toBeInstanceOf(RepositoryNotFoundError);
    const { config } = await resolvePretrained('org/private', { ...fixture.options, token: 'hf_secret', revision: 'v1' });
    expect(config).toEqual({ model_type: 'net', hidden_size: 3 });
    expect(fixture.hub.requests.some((r) => r.path.includes('/revision/v1') && r.authorization === 'Bearer hf_secret')).toBe(true);
  });
});
