"""What both reference scripts share: a safetensors writer (no dependency beyond torch and numpy),
the int8 power-of-two grid that keeps large weight fixtures small, and the JSON writer."""
import json
import math
import struct

import torch

FILE_DTYPES = {torch.float32: 'F32', torch.int64: 'I64', torch.int32: 'I32', torch.int8: 'I8', torch.uint8: 'U8'}


def write_safetensors(path, tensors, metadata=None):
    """Write `tensors` (name -> tensor) in the safetensors layout: an 8-byte little-endian header
    length, the JSON header padded with spaces to a multiple of 8, then the raw little-endian data,
    wider dtypes first so that every tensor's data stays aligned to its element size."""
    order = sorted(tensors, key=lambda name: -tensors[name].element_size())
    header, chunks, offset = {}, [], 0
    for name in order:
        t = tensors[name].detach().contiguous().cpu()
        data = t.numpy().astype(t.numpy().dtype.newbyteorder('<')).tobytes()
        header[name] = {'dtype': FILE_DTYPES[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header['__metadata__'] = metadata
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        f.write(b''.join(chunks))


def snap_to_int8_grid_(t):
    """Round `t` in place onto the grid k * 2**-e (integer |k| <= 127, e as large as t's range allows),
    and return (k as int8, e). Every grid value is exact in float32 on both sides, so a fixture
    can store one byte per weight instead of four."""
    e = math.floor(math.log2(127 / t.abs().max().item()))
    k = torch.round(t * 2.0 ** e)
    t.copy_(k * 2.0 ** -e)
    return k.to(torch.int8), e


def write_state_dict(path, state_dict, int8_grid=False):
    """Write a state dict: float32 as is, or with `int8_grid` every float tensor snapped in place onto
    its int8 grid and stored as int8, its exponent e in the metadata under the tensor's name."""
    if not int8_grid:
        write_safetensors(path, state_dict)
        return
    stored, exponents = {}, {}
    for name, t in state_dict.items():
        stored[name], exponents[name] = snap_to_int8_grid_(t)
    write_safetensors(path, stored, {name: str(e) for name, e in exponents.items()})


def write_json(path, record):
    with open(path, 'w') as f:
        json.dump(record, f, separators=(',', ':'))
        f.write('\n')
