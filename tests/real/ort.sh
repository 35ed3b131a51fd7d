# Sourced by the real-model tests: ONNX Runtime in their --ep cpu runs, when it is installed.
# ort_setup PASSCHECK sets the array `ort` to the `--property` option naming every property (ort-oracle
# included), or leaves it empty and says why; ort_judged NAME JSON checks that ORT judged the model (ort-oracle
# passed, not skipped).
ort_setup() {
    local dir=${PC_ORT_DIR:-$HOME/.cache/passcheck/ort/node_modules}
    ort=()
    if command -v node >/dev/null 2>&1 && [ -d "$dir/onnxruntime-node" ]; then
        ort=(--property "$("$1" suite --list-properties | awk '{print $1}' | paste -sd, -)")
    else
        echo "node or onnxruntime-node missing: ONNX Runtime not compared"
    fi
}

ort_judged() {
    check "$1: ONNX Runtime judged it (ort-oracle passed, not skipped)" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))['judgments']['ort-oracle']
sys.exit(not (j['pass'] == 1 and j['skip'] == j['fail'] == j['error'] == 0))" "$2"
}
