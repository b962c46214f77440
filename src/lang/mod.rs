//! Lexer and parser for Python (Warp's kernel dialect), with line/column spans.

pub mod ast;
pub mod lexer;
pub mod parser;

pub use lexer::{NameSet, Token, TokenKind, tokenize, word};
pub use parser::{parse_module, parse_tokens};
