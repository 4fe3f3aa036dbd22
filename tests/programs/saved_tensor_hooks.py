"""The autograd notes' saved-tensor examples: what _saved_self/_saved_result return, hooks that
print, hooks registered on one saved tensor, save_on_cpu, and saving to disk through temporary
files with torch.save/torch.load."""
import os
import tempfile
import uuid

import gradviz as torch

x = torch.ones(5, requires_grad=True)
y = x.pow(2)
print(y.grad_fn._saved_self is x)  # True: an input is saved as itself

y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True: the same values
print(y.grad_fn._saved_result is y)  # False: a new tensor object


def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
print(a.grad, b.grad_fn)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
y.sum().backward()
print(x.grad)

tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


class SelfDeletingTempFile:
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)


def pack_to_disk(tensor):
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file


def unpack_from_disk(temp_file):
    return torch.load(temp_file.name, weights_only=True)


model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
inp = torch.tensor([[0.1, 0.2, 0.3], [-0.3, 0.1, 0.5]])
with torch.autograd.graph.saved_tensors_hooks(pack_to_disk, unpack_from_disk):
    out = model(inp).sum()
print(len(os.listdir(tmp_dir)) > 0)
out.backward()
print(model[0].weight.grad)
del out
print(len(os.listdir(tmp_dir)))

with torch.autograd.graph.save_on_cpu(pin_memory=False):
    out = model(inp).pow(2).sum()
out.backward()
print(model[2].bias.grad)

with torch.autograd.graph.disable_saved_tensors_hooks("saved tensors hooks are off here"):
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            pass
    except RuntimeError as e:
        print("RuntimeError:", e)
