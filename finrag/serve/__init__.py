"""The local API: `finrag serve` (HTTP, finrag.serve.app) and `finrag mcp` (MCP over
stdio, finrag.serve.mcp_tools), front ends beside the CLI. Each route calls the function
its CLI command calls (``ask_outcome``, ``search_report``, ``facts_outcome``...), so the
JSON is the one `--json` prints, and takes the command's options as fields
(finrag.serve.fields)."""
