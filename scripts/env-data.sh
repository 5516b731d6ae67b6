#!/usr/bin/env bash
# Regenerates src/env/read/data/ (see its README.md): pipreqs' import-name mapping and CPython 3.11's stdlib names.
# Run by hand when either should move; the result is committed. Needs network to GitHub and a python3.11.
set -euo pipefail
cd "$(dirname "$0")/../src/env/read/data"
commit=${PIPREQS_COMMIT:-48dbafd39003b9de177b8d314795e45797555850}
curl -fsSL "https://raw.githubusercontent.com/bndr/pipreqs/${commit}/pipreqs/mapping" -o pipreqs-mapping.txt
python3.11 -c "import sys; print('\n'.join(sorted(sys.stdlib_module_names)))" > stdlib-3.11.txt
wc -l pipreqs-mapping.txt stdlib-3.11.txt
