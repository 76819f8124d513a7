"""GET /api/docs/: the OpenAPI schema as one server-rendered HTML page (no JavaScript, no CDN).

Rendered from the same generated schema as `/api/schema/`, so the page and the schema cannot drift apart.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template import Context, Engine
from django.utils.safestring import SafeString, mark_safe
from drf_spectacular.generators import SchemaGenerator

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
_REF = re.compile(r"&quot;#/components/schemas/([A-Za-z0-9_.-]+)&quot;")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_ENGINE = Engine(dirs=[str(Path(__file__).parent / "templates")], autoescape=True)


def text_html(text: str) -> SafeString:
    """A description with its `code spans` set in <code>; everything else escaped."""
    return mark_safe(_CODE_SPAN.sub(r"<code>\1</code>", html.escape(text)))


def schema_html(schema: Any) -> SafeString:
    """A schema as indented JSON, with every `$ref` a link to the component's section (a bare ref: just the link)."""
    if isinstance(schema, dict) and set(schema) == {"$ref"}:
        name = html.escape(str(schema["$ref"]).rsplit("/", 1)[-1])
        return mark_safe(f'<a href="#schema-{name}">{name}</a>')
    escaped = html.escape(json.dumps(schema, indent=2, ensure_ascii=False))
    return mark_safe(_REF.sub(r'<a href="#schema-\1">&quot;\1&quot;</a>', escaped))


def _content_schemas(content: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows = []
    for media_type, body in (content or {}).items():
        schema = body.get("schema", {})
        is_ref = isinstance(schema, dict) and set(schema) == {"$ref"}
        rows.append({"media_type": media_type, "schema": schema_html(schema), "is_ref": is_ref})
    return rows


def operations(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Every operation of the schema, in path order, flattened for the template."""
    rows: list[dict[str, Any]] = []
    for path, item in schema.get("paths", {}).items():
        for method in HTTP_METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            rows.append(
                {
                    "anchor": operation.get("operationId", f"{method}-{path}"),
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": text_html(operation.get("description", "")),
                    "needs_token": any(operation.get("security", [])),
                    "parameters": [
                        {
                            "name": p.get("name"),
                            "location": p.get("in"),
                            "required": p.get("required", False),
                            "schema": json.dumps(p.get("schema", {}), ensure_ascii=False),
                            "description": text_html(p.get("description", "")),
                        }
                        for p in operation.get("parameters", [])
                    ],
                    "request": _content_schemas((operation.get("requestBody") or {}).get("content")),
                    "responses": [
                        {
                            "status": status,
                            "description": text_html(response.get("description", "")),
                            "content": _content_schemas(response.get("content")),
                            "headers": sorted(response.get("headers", {})),
                        }
                        for status, response in sorted(operation.get("responses", {}).items())
                    ],
                }
            )
    return rows


def api_docs(request: HttpRequest) -> HttpResponse:
    schema: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    components = schema.get("components", {}).get("schemas", {})
    context = {
        "info": schema.get("info", {}),
        "operations": operations(schema),
        "components": [
            {"name": name, "schema": schema_html(body)} for name, body in sorted(components.items())
        ],
    }
    page = _ENGINE.get_template("api_docs.html").render(Context(context))
    return HttpResponse(page, content_type="text/html; charset=utf-8")
