//! Lexer and parser for Python (Warp's kernel dialect), with line/column spans.
