#!/usr/bin/python3
"""Builds the two tiny ONNX models the context tests load through @huggingface/transformers.

No model hub is reachable here, so the tests ship their own models. Both are BERT-shaped (model_type "bert",
a WordPiece tokenizer.json, onnx/model.onnx with input_ids/attention_mask/token_type_ids) so that the real
transformers.js loading and inference code runs on them:

  fixtures/models/tiny-embed   2-layer transformer encoder -> last_hidden_state (feature extraction)
  fixtures/models/tiny-rerank  the same encoder read as a cross-encoder -> logits [batch, 1]

They are not trained. Word vectors are set by hand: the words of one synonym group share a direction (plus
noise), every other word gets its own random direction at 0.4 of the length, and the encoder layers have small random weights so
that the residual stream keeps the word meaning. Mean-pooled, that makes a bag-of-synonyms embedding: good
enough to check that the semantic leg finds code that shares meaning, not words, with a report. The reranker
scores a pair by the cosine of its two segments' mean vectors (token_type_ids tell the segments apart).

Run: /usr/bin/python3 scripts/make-test-model.py  (needs only torch; seeded, so the output is reproducible)
"""
import json
import os
import sys

import torch
from torch import nn

torch.manual_seed(7)
DIM = 64
HEADS = 2
LAYERS = 2
MAX_POS = 512
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'models')

SYNONYMS = [
    'nan inf infinity infinite overflow diverge diverges divergence diverging explode exploding isnan isinf',
    'accuracy metric metrics precision topk top1 top5 correct',
    'learning rate lr scheduler warmup decay',
    'image images picture pictures pixel pixels photo',
    'resize rescale scale scaling interpolate upsample downsample',
    'normalize normalization norm standardize groupnorm batchnorm layernorm',
    'tokenize tokenizer token tokens vocabulary vocab',
    'loss objective criterion cost',
    'gradient gradients grad grads backward backprop',
    'mask masks padding pad padded',
    'checkpoint save load restore weights state serialize',
    'batch batches minibatch',
    'augment augmentation mixup cutmix transform transforms',
    'embedding embeddings embed',
    'attention softmax heads',
    'crash error exception fails failure raise',
    'shape shapes dimension dimensions size mismatch',
    'device cuda gpu cpu',
    'memory oom allocate allocation',
    'label labels target targets class classes',
    'model network net module',
    'optimizer optim adam sgd momentum',
    'data dataset datasets loader dataloader sample samples',
    'train training fit epoch epochs step steps',
    'evaluate evaluation eval validate validation inference predict',
    'sequence sequences length lengths',
    'rotary rope sincos position positional',
]
OTHER = """
a an the of to in for on is it this that with as by be are was from or and not no if else when then
def class return import self none true false function method call value values number numbers
input inputs output outputs result results first last each all any list dict array tensor tensors
zero zeros one ones two three k n x y z i j min max sum mean std add multiply matmul linear conv layer
layers feature features weight bias hidden dim dims channel channels width height pool pooling
random seed config configs option options name names file files path text string int float bool
create build get set update apply run forward init new old use using used while got expected out range
index indices select selected binary multi small large big wrong instead should would could works work
""".split()
PUNCT = list('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')
SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']


def build_vocab():
    words = []
    for group in SYNONYMS:
        words += [w for w in group.split() if w not in words]
    words += [w for w in OTHER if w not in words]
    digits = [str(d) for d in range(10)]
    suffixes = ['##s', '##ed', '##ing', '##er', '##ly'] + ['##' + d for d in digits]
    return SPECIAL + PUNCT + digits + words + [s for s in suffixes if s not in words]


def word_vectors(vocab):
    vecs = torch.zeros(len(vocab), DIM)
    group_of = {}
    centers = []
    for gi, group in enumerate(SYNONYMS):
        centers.append(nn.functional.normalize(torch.randn(DIM), dim=0))
        for w in group.split():
            group_of.setdefault(w, gi)
    for i, w in enumerate(vocab):
        if w in SPECIAL or w in PUNCT or w.startswith('##'):
            continue  # structural tokens carry no meaning: zero vectors leave the mean pooling to the words
        if w in group_of:
            vecs[i] = centers[group_of[w]] + 0.25 * torch.randn(DIM) / DIM ** 0.5
        else:
            # Common words weigh less than the words of the synonym groups, a crude stand-in for IDF.
            vecs[i] = 0.4 * nn.functional.normalize(torch.randn(DIM), dim=0)
    return vecs


class Layer(nn.Module):
    """Pre-norm self-attention + feed-forward with small weights, written out so that ONNX export is plain."""

    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.norm2 = nn.LayerNorm(DIM)
        self.ff1 = nn.Linear(DIM, 2 * DIM)
        self.ff2 = nn.Linear(2 * DIM, DIM)
        for lin in (self.proj, self.ff2):
            nn.init.normal_(lin.weight, std=0.001)
            nn.init.zeros_(lin.bias)

    def forward(self, h, additive_mask):
        b, t, _ = h.shape
        q, k, v = self.qkv(self.norm1(h)).reshape(b, t, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / (DIM // HEADS) ** 0.5 + additive_mask
        ctx = att.softmax(-1) @ v
        h = h + self.proj(ctx.transpose(1, 2).reshape(b, t, DIM))
        return h + self.ff2(torch.relu(self.ff1(self.norm2(h))))


class Encoder(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.word = nn.Embedding(len(vocab), DIM)
        self.word.weight.data.copy_(word_vectors(vocab))
        self.pos = nn.Embedding(MAX_POS, DIM)
        nn.init.normal_(self.pos.weight, std=0.001)
        self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])

    def encode(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        h = self.word(input_ids) + self.pos(positions)
        additive = (1.0 - attention_mask[:, None, None, :].float()) * -1e4
        for layer in self.layers:
            h = layer(h, additive)
        return h


class FeatureExtraction(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.encoder.encode(input_ids, attention_mask) + 0.0 * token_type_ids.unsqueeze(-1).float()


class CrossEncoder(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids, attention_mask, token_type_ids):
        h = self.encoder.encode(input_ids, attention_mask)
        m = attention_mask.float()
        a = (m * (1 - token_type_ids.float())).unsqueeze(-1)
        b = (m * token_type_ids.float()).unsqueeze(-1)
        ea = nn.functional.normalize((h * a).sum(1) / a.sum(1).clamp(min=1), dim=-1)
        eb = nn.functional.normalize((h * b).sum(1) / b.sum(1).clamp(min=1), dim=-1)
        return (ea * eb).sum(-1, keepdim=True) * 10.0


def tokenizer_json(vocab):
    ids = {w: i for i, w in enumerate(vocab)}
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': [
            {'id': ids[t], 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False,
             'normalized': False, 'special': True} for t in SPECIAL
        ],
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True,
                       'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': {'id': '[CLS]', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                       {'SpecialToken': {'id': '[SEP]', 'type_id': 0}}],
            'pair': [{'SpecialToken': {'id': '[CLS]', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                     {'SpecialToken': {'id': '[SEP]', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}},
                     {'SpecialToken': {'id': '[SEP]', 'type_id': 1}}],
            'special_tokens': {t: {'id': t, 'ids': [ids[t]], 'tokens': [t]} for t in ('[CLS]', '[SEP]')},
        },
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##',
                  'max_input_chars_per_word': 100, 'vocab': ids},
    }


def config(arch, extra):
    base = {'model_type': 'bert', 'architectures': [arch], 'hidden_size': DIM, 'num_hidden_layers': LAYERS,
            'num_attention_heads': HEADS, 'intermediate_size': 2 * DIM, 'max_position_embeddings': MAX_POS,
            'vocab_size': None, 'type_vocab_size': 2, 'pad_token_id': 0}
    base.update(extra)
    return base


def export(module, name, output_name, arch, extra, vocab):
    out = os.path.join(ROOT, name)
    os.makedirs(os.path.join(out, 'onnx'), exist_ok=True)
    ids = torch.tensor([[2, 40, 41, 3]])
    mask = torch.ones_like(ids)
    types = torch.zeros_like(ids)
    module.eval()
    axes = {'input_ids': {0: 'batch', 1: 'seq'}, 'attention_mask': {0: 'batch', 1: 'seq'},
            'token_type_ids': {0: 'batch', 1: 'seq'}}
    if output_name == 'last_hidden_state':
        axes[output_name] = {0: 'batch', 1: 'seq'}
    else:
        axes[output_name] = {0: 'batch'}
    torch.onnx.export(module, (ids, mask, types), os.path.join(out, 'onnx', 'model.onnx'),
                      input_names=['input_ids', 'attention_mask', 'token_type_ids'], output_names=[output_name],
                      dynamic_axes=axes, opset_version=14, do_constant_folding=True)
    cfg = config(arch, extra)
    cfg['vocab_size'] = len(vocab)
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(out, 'tokenizer.json'), 'w') as f:
        json.dump(tokenizer_json(vocab), f)
    with open(os.path.join(out, 'tokenizer_config.json'), 'w') as f:
        json.dump({'tokenizer_class': 'BertTokenizer', 'do_lower_case': True, 'model_max_length': MAX_POS,
                   'cls_token': '[CLS]', 'sep_token': '[SEP]', 'pad_token': '[PAD]', 'unk_token': '[UNK]',
                   'mask_token': '[MASK]'}, f, indent=2)
    print(f'wrote {out}', file=sys.stderr)


def main():
    vocab = build_vocab()
    encoder = Encoder(vocab)
    with torch.no_grad():
        export(FeatureExtraction(encoder), 'tiny-embed', 'last_hidden_state', 'BertModel', {}, vocab)
        export(CrossEncoder(encoder), 'tiny-rerank', 'logits', 'BertForSequenceClassification',
               {'num_labels': 1, 'id2label': {'0': 'LABEL_0'}, 'label2id': {'LABEL_0': 0}}, vocab)


if __name__ == '__main__':
    main()
