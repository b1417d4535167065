"""Write the control plane's OpenAPI document to docs/openapi-admin.json."""

from __future__ import annotations

import json
from pathlib import Path

from matchmaker.control import openapi_document

TARGET = Path(__file__).parents[2] / "docs" / "openapi-admin.json"

if __name__ == "__main__":
    TARGET.write_text(json.dumps(openapi_document(), indent=2) + "\n")
    print(f"wrote {TARGET}")
