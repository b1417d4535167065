"""The dashboard's two forms: editing a task (``PUT /api/tasks/{id}``) and creating one
(``POST /api/tasks``). The script sends them as JSON and shows each field's error next to
it; without the script they are inert (the API refuses anything but JSON)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tasktool.planning.writing.changes import EDITABLE_LISTS, EDITABLE_SCALARS
from tasktool.web.layout import Links, h

__all__ = ["CREATE_FIELDS", "create_form", "edit_form"]

#: What the create form asks: the edit form's fields and the folder to write the file in.
CREATE_FIELDS: tuple[str, ...] = (*EDITABLE_SCALARS, *EDITABLE_LISTS, "group")


def _field_input(
    field: str, value: Any, vocabulary: Mapping[str, Sequence[str]], prefix: str
) -> str:
    label = field.replace("_", " ").capitalize()
    known = vocabulary.get(field)
    name = f'name="{field}" id="{prefix}-{field}"'
    if field in EDITABLE_LISTS:
        text = ", ".join(value or ())
        control = f'<input {name} value="{h(text)}" data-list placeholder="comma separated">'
    elif known:
        blank = "" if field in {"status"} else '<option value="">(none)</option>'
        options = "".join(
            f'<option value="{h(v)}"' + (" selected" if v == value else "") + f">{h(v)}</option>"
            for v in ([*known] if value in (None, *known) else [*known, value])
        )
        control = f"<select {name}>{blank}{options}</select>"
    else:
        required = " required" if field == "title" else ""
        control = f'<input {name} value="{h(value)}"{required}>'
    return (
        f'<div class="field"><label for="{prefix}-{field}">{label}</label>{control}'
        f'<p class="field-error" data-error-for="{field}" role="alert"></p></div>'
    )


def _body_and_actions(prefix: str, body: str, action: str, rows: int) -> str:
    return f"""<div class="field wide"><label for="{prefix}-body">Body (Markdown)</label>
<textarea name="body" id="{prefix}-body" rows="{rows}">{h(body)}</textarea>
<p class="field-error" data-error-for="body" role="alert"></p></div>
<div class="actions"><button type="submit" class="primary">{action} <kbd>Ctrl+Enter</kbd></button>
<p class="form-status" data-form-status role="status"></p></div>"""


def edit_form(
    detail: Mapping[str, Any], vocabulary: Mapping[str, Sequence[str]], links: Links
) -> str:
    """The edit form of a task page: every editable field, the changed ones are sent."""
    fields = "".join(
        _field_input(field, detail[field], vocabulary, "edit")
        for field in (*EDITABLE_SCALARS, *EDITABLE_LISTS)
    )
    return f"""<section class="edit" aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
<form data-edit-form data-action="{h(links.api("tasks") + "/" + detail["id"])}" novalidate>
<div class="grid">{fields}</div>
{_body_and_actions("edit", detail["body"], "Save", 12)}
</form>
</section>"""


def create_form(vocabulary: Mapping[str, Sequence[str]], links: Links) -> str:
    """The task table's "New task" form (folded until opened, or the key ``c``): the
    fields that are filled are sent; the new task's page opens when it is written."""
    fields = "".join(
        _field_input(field, "pending" if field == "status" else None, vocabulary, "new")
        for field in CREATE_FIELDS
    )
    return f"""<details class="create" data-create>
<summary>New task <kbd>c</kbd></summary>
<section class="edit" aria-label="New task">
<form data-create-form data-action="{h(links.api("tasks"))}"
 data-task-base="{h(links.task(""))}" novalidate>
<div class="grid">{fields}</div>
{_body_and_actions("new", "", "Create", 5)}
</form>
</section>
</details>"""
