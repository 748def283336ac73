"""Writes a .safetensors file with plain torch (no `safetensors` package): an 8-byte little-endian
header length, the JSON header (dtype, shape and byte range of each tensor, names sorted), then
each tensor's raw little-endian bytes. Shared by the fixture scripts of this folder."""
import json
import struct

import torch

# torch dtype -> (safetensors dtype name, an integer dtype of the same width, whose bytes numpy can give)
_DTYPES = {
    torch.float64: ('F64', torch.int64),
    torch.float32: ('F32', torch.int32),
    torch.float16: ('F16', torch.int16),
    torch.bfloat16: ('BF16', torch.int16),
    torch.int32: ('I32', torch.int32),
    torch.int64: ('I64', torch.int64),
}


def write_safetensors(path, tensors, metadata=None):
    """Write `tensors` (name -> torch.Tensor) to `path`; `metadata` (str -> str) goes under __metadata__."""
    header = {} if metadata is None else {'__metadata__': dict(metadata)}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        if t.dtype not in _DTYPES:
            raise TypeError(f'{name}: dtype {t.dtype} is not written by this script')
        code, same_width = _DTYPES[t.dtype]
        data = t.view(same_width).numpy().astype(t.view(same_width).numpy().dtype.newbyteorder('<')).tobytes()
        header[name] = {'dtype': code, 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(',', ':')).encode('utf-8')
    text += b' ' * (-len(text) % 8)  # pad the header so the data starts 8-byte aligned
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for data in chunks:
            f.write(data)
