/**
 * What DL code conventionally leaves out of a snippet: the imports everybody writes the same way, and
 * hyper-parameters whose value rarely decides a bug. Tier 0 fills these in, and says so in its feedback.
 */

import { KERAS_IMPORTS } from './keras-conventions.js';

/** Conventional imports by the name they bind. */
export const CONVENTIONAL_IMPORTS: Readonly<Record<string, string>> = {
  torch: 'import torch',
  nn: 'import torch.nn as nn',
  F: 'import torch.nn.functional as F',
  functional: 'from torch.nn import functional',
  optim: 'import torch.optim as optim',
  np: 'import numpy as np',
  numpy: 'import numpy',
  DataLoader: 'from torch.utils.data import DataLoader',
  Dataset: 'from torch.utils.data import Dataset',
  TensorDataset: 'from torch.utils.data import TensorDataset',
  random_split: 'from torch.utils.data import random_split',
  Variable: 'from torch.autograd import Variable',
  init: 'import torch.nn.init as init',
  lr_scheduler: 'from torch.optim import lr_scheduler',
  Tensor: 'from torch import Tensor',
  math: 'import math',
  os: 'import os',
  sys: 'import sys',
  time: 'import time',
  random: 'import random',
  copy: 'import copy',
  collections: 'import collections',
  OrderedDict: 'from collections import OrderedDict',
  itertools: 'import itertools',
  json: 'import json',
  torchvision: 'import torchvision',
  transforms: 'import torchvision.transforms as transforms',
  datasets: 'from torchvision import datasets',
  models: 'from torchvision import models',
  plt: 'import matplotlib.pyplot as plt',
  pd: 'import pandas as pd',
  tf: 'import tensorflow as tf',
  keras: 'from tensorflow import keras',
  tqdm: 'from tqdm import tqdm',
  trange: 'from tqdm import trange',
  train_test_split: 'from sklearn.model_selection import train_test_split',
};

/** Whether code is Keras/TensorFlow code: it imports or names either. */
const KERAS_CODE = /^\s*(?:from|import)\s+(?:keras|tensorflow|tf_keras)\b|\b(?:tf|keras)\.\w/m;

/** Whether `source` is Keras/TensorFlow code (it imports or names either). */
export function isKerasCode(source: string): boolean {
  return KERAS_CODE.test(source);
}

/**
 * The import that binds `name` in code that uses it without importing it: Keras's public API (keras-conventions.ts)
 * in Keras/TensorFlow code, torch's conventions first elsewhere (`models` is torchvision's there), else the other.
 */
export function conventionalImport(name: string, source: string): string | undefined {
  if (!Object.hasOwn(CONVENTIONAL_IMPORTS, name) && !Object.hasOwn(KERAS_IMPORTS, name)) return undefined;
  const keras = isKerasCode(source);
  const first = keras ? KERAS_IMPORTS : CONVENTIONAL_IMPORTS;
  const second = keras ? CONVENTIONAL_IMPORTS : KERAS_IMPORTS;
  return Object.hasOwn(first, name) ? first[name] : second[name];
}

/** Stated defaults for hyper-parameters a snippet uses without defining. Values are small so runs stay fast on a CPU. */
export const HYPERPARAMETER_DEFAULTS: Readonly<Record<string, string>> = {
  lr: '0.01',
  learning_rate: '0.01',
  LR: '0.01',
  LEARNING_RATE: '0.01',
  momentum: '0.9',
  weight_decay: '0.0',
  batch_size: '32',
  BATCH_SIZE: '32',
  num_epochs: '10',
  n_epochs: '10',
  epochs: '10',
  EPOCHS: '10',
  NUM_EPOCHS: '10',
  input_size: '10',
  input_dim: '10',
  in_features: '10',
  num_features: '10',
  n_features: '10',
  hidden_size: '64',
  hidden_dim: '64',
  output_size: '1',
  output_dim: '1',
  out_features: '1',
  num_classes: '10',
  n_classes: '10',
  in_channels: '3',
  num_layers: '2',
  n_layers: '2',
  seq_len: '10',
  sequence_length: '10',
  embedding_dim: '32',
  embed_dim: '32',
  vocab_size: '100',
  kernel_size: '3',
  image_size: '32',
  img_size: '32',
  num_workers: '0',
  dropout: '0.0',
  drop_rate: '0.0',
  batchnorm: 'False',
  seed: '0',
  SEED: '0',
  device: "torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
  DEVICE: "torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
};

/**
 * Top-level modules that cannot work without the network however the script is written
 * (they fetch datasets or weights) when called this way.
 */
export const NETWORK_PATTERNS: readonly { re: RegExp; what: string }[] = [
  { re: /datasets\.\w+\([^)]*download\s*=\s*True/s, what: 'a torchvision dataset download (download=True)' },
  { re: /\bload_dataset\(/, what: 'a Hugging Face datasets download (load_dataset)' },
  { re: /\.from_pretrained\(/, what: 'pretrained weights from the Hugging Face hub (from_pretrained)' },
  { re: /\bpretrained\s*=\s*True|weights\s*=\s*['"A-Z]\w*(?:_Weights|DEFAULT)/, what: 'pretrained torchvision weights' },
  { re: /\b(?:urlopen|urlretrieve|requests\.get|wget\.download)\(/, what: 'a file download' },
  { re: /keras\.datasets\.\w+\.load_data\(/, what: 'a Keras dataset download (load_data)' },
  { re: /\btfds\.load\(/, what: 'a TensorFlow Datasets download' },
];
