"""Writes BERT's parity fixtures: test/fixtures/bert-tiny and test/fixtures/bert-tiny-legacy.

The model is Hugging Face's BertForMaskedLM math (with BertModel's pooler) in plain torch 1.13 under
its exact parameter names: word + position + token-type embeddings, LayerNorm, post-norm encoder
layers with exact (erf) GELU, a [B, T] attention mask of 1/0 turned into an additive mask of
finfo.min, a tanh pooler over the first token, and the masked-LM head whose decoder is tied to the
word embeddings. Both folders hold the same weights under a BertForPreTraining-style file (`bert.`
prefix, pooler included, as bert-base-uncased):
  bert-tiny         today's names (LayerNorm.weight/bias), tied decoder left out
  bert-tiny-legacy  older names (LayerNorm.gamma/beta), plus cls.predictions.decoder.weight,
                    cls.seq_relationship.*, bert.embeddings.position_ids (I64), as old checkpoints have
bert-tiny/expected.safetensors:
  input_ids, token_type_ids, attention_mask   a [2, 8] batch, the second row padded after 5 tokens
  last_hidden_state, pooler_output, logits     fp32 outputs (logits: the masked-LM head)
  *_f64                                        the same computed in float64
  logits_bf16, last_hidden_state_bf16          with the whole model in bfloat16
  loss, grad.<name>                            masked-LM cross entropy over the real tokens and its gradients (eval mode; the pooler has none)

Run from packages/models: python3 scripts/make_bert_fixture.py
"""
import json
import math
import os

import torch
import torch.nn.functional as F

from write_safetensors import write_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = {
    'architectures': ['BertForMaskedLM'],
    'model_type': 'bert',
    'vocab_size': 100,
    'hidden_size': 32,
    'num_hidden_layers': 2,
    'num_attention_heads': 4,
    'intermediate_size': 64,
    'hidden_act': 'gelu',
    'hidden_dropout_prob': 0.1,
    'attention_probs_dropout_prob': 0.1,
    'max_position_embeddings': 32,
    'type_vocab_size': 2,
    'initializer_range': 0.02,
    'layer_norm_eps': 1e-12,
    'pad_token_id': 0,
    'position_embedding_type': 'absolute',
    'torch_dtype': 'float32',
}


class Embeddings(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(c['vocab_size'], c['hidden_size'], padding_idx=c['pad_token_id'])
        self.position_embeddings = torch.nn.Embedding(c['max_position_embeddings'], c['hidden_size'])
        self.token_type_embeddings = torch.nn.Embedding(c['type_vocab_size'], c['hidden_size'])
        self.LayerNorm = torch.nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, ids, types):
        positions = torch.arange(ids.shape[1])[None]
        return self.LayerNorm(self.word_embeddings(ids) + self.token_type_embeddings(types) + self.position_embeddings(positions))


class SelfAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c['num_attention_heads'], c['hidden_size'] // c['num_attention_heads']
        self.query = torch.nn.Linear(c['hidden_size'], c['hidden_size'])
        self.key = torch.nn.Linear(c['hidden_size'], c['hidden_size'])
        self.value = torch.nn.Linear(c['hidden_size'], c['hidden_size'])

    def forward(self, x, mask):
        b, t, h = x.shape
        q, k, v = (p(x).view(b, t, self.heads, self.head_dim).transpose(1, 2) for p in (self.query, self.key, self.value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask
        return (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, h)


class DenseNorm(torch.nn.Module):
    """BertSelfOutput and BertOutput: LayerNorm(dense(x) + residual)."""
    def __init__(self, n_in, c):
        super().__init__()
        self.dense = torch.nn.Linear(n_in, c['hidden_size'])
        self.LayerNorm = torch.nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class Attention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        setattr(self, 'self', SelfAttention(c))
        self.output = DenseNorm(c['hidden_size'], c)

    def forward(self, x, mask):
        return self.output(getattr(self, 'self')(x, mask), x)


class Intermediate(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c['hidden_size'], c['intermediate_size'])

    def forward(self, x):
        return F.gelu(self.dense(x))


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = DenseNorm(c['intermediate_size'], c)

    def forward(self, x, mask):
        a = self.attention(x, mask)
        return self.output(self.intermediate(a), a)


class Encoder(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = torch.nn.ModuleList([Layer(c) for _ in range(c['num_hidden_layers'])])


class Pooler(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c['hidden_size'], c['hidden_size'])

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        self.pooler = Pooler(c)

    def forward(self, ids, types, attention_mask):
        x = self.embeddings(ids, types)
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.encoder.layer:
            x = layer(x, mask)
        return x, self.pooler(x)


class Transform(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c['hidden_size'], c['hidden_size'])
        self.LayerNorm = torch.nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, x):
        return self.LayerNorm(F.gelu(self.dense(x)))


class Predictions(torch.nn.Module):
    def __init__(self, c, word_embeddings):
        super().__init__()
        self.transform = Transform(c)
        self.decoder = torch.nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(c['vocab_size']))
        self.decoder.weight = word_embeddings.weight
        self.decoder.bias = self.bias

    def forward(self, x):
        return self.decoder(self.transform(x))


class Heads(torch.nn.Module):
    def __init__(self, c, word_embeddings):
        super().__init__()
        self.predictions = Predictions(c, word_embeddings)


class ForMaskedLM(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c)
        self.cls = Heads(c, self.bert.embeddings.word_embeddings)

    def forward(self, ids, types, attention_mask):
        hidden, pooled = self.bert(ids, types, attention_mask)
        return hidden, pooled, self.cls.predictions(hidden)


def main():
    torch.manual_seed(0)
    c = CONFIG
    model = ForMaskedLM(c)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if 'LayerNorm.weight' in name:
                p.copy_(1 + 0.2 * torch.randn_like(p))
            elif name.endswith('bias'):
                p.copy_(0.1 * torch.randn_like(p))
            elif 'embeddings' in name:
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    model.eval()
    fixtures = os.path.join(HERE, '..', 'test', 'fixtures')
    # The state dict as PyTorch gives it, tied copies (decoder.weight/bias) included; a file leaves them out.
    state = {k: v.clone() for k, v in model.state_dict().items()}
    modern = {k: v for k, v in state.items() if not k.startswith('cls.predictions.decoder.')}
    legacy = {k.replace('LayerNorm.weight', 'LayerNorm.gamma').replace('LayerNorm.bias', 'LayerNorm.beta'): v
              for k, v in state.items() if k != 'cls.predictions.decoder.bias'}
    legacy['bert.embeddings.position_ids'] = torch.arange(c['max_position_embeddings'])[None]
    legacy['cls.seq_relationship.weight'] = torch.randn(2, c['hidden_size'])
    legacy['cls.seq_relationship.bias'] = torch.randn(2)
    for name, weights in [('bert-tiny', modern), ('bert-tiny-legacy', legacy)]:
        out = os.path.join(fixtures, name)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, 'config.json'), 'w') as f:
            json.dump(c, f, indent=2)
            f.write('\n')
        write_safetensors(os.path.join(out, 'model.safetensors'), weights, {'format': 'pt'})

    ids = torch.randint(1, c['vocab_size'], (2, 8))
    ids[1, 5:] = c['pad_token_id']
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0, 0]])
    mask = torch.tensor([[1] * 8, [1] * 5 + [0] * 3])
    expected = {'input_ids': ids.int(), 'token_type_ids': types.int(), 'attention_mask': mask.int()}
    with torch.no_grad():
        hidden, pooled, logits = model(ids, types, mask)
        expected.update(last_hidden_state=hidden, pooler_output=pooled, logits=logits)
        exact = ForMaskedLM(c)
        exact.load_state_dict(model.state_dict())
        hidden, pooled, logits = exact.double().eval()(ids, types, mask)
        expected.update(last_hidden_state_f64=hidden, pooler_output_f64=pooled, logits_f64=logits)
        # The whole model in bf16: torch 1.13's cpu autocast fails in layer_norm (bf16 input, fp32 weight).
        half = ForMaskedLM(c)
        half.load_state_dict(model.state_dict())
        hidden, _, logits = half.to(torch.bfloat16).eval()(ids, types, mask)
        expected.update(last_hidden_state_bf16=hidden.float(), logits_bf16=logits.float())
    _, _, logits = model(ids, types, mask)
    real = mask.reshape(-1).bool()
    loss = F.cross_entropy(logits.reshape(-1, c['vocab_size'])[real], ids.reshape(-1)[real])
    loss.backward()
    expected['loss'] = loss.detach().reshape(1)
    for k, p in model.named_parameters():
        if p.grad is not None:  # the pooler takes no part in the masked-LM loss
            expected['grad.' + k] = p.grad.clone()
    write_safetensors(os.path.join(fixtures, 'bert-tiny', 'expected.safetensors'), expected)


if __name__ == '__main__':
    main()
