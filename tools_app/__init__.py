"""Tool registry, tool input schemas, the tools themselves, status messages and result formatting."""
