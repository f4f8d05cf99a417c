"""Sessions written out: text exports (Markdown, trace, DOT, JSON), OTLP spans, and push to a trace store."""
