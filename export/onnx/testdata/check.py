# check.py runs the ONNX checker (onnx.checker.check_model with
# full_check, which adds strict shape inference) on every file named on
# the command line, for TestChecker.
import sys

import onnx

for path in sys.argv[1:]:
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # the checker's own error types vary by version
        sys.exit(f"{path}: {e}")
print(f"onnx {onnx.__version__}: {len(sys.argv) - 1} graphs checked")
