//! Which syntax nodes each language's outline shows, and how.

use tree_sitter::Language;

/// How a node appears in the outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Its first line (imports, fields, consts, prototypes).
    Line,
    /// Its text up to the body (functions and methods); the body is never shown.
    Signature,
    /// Its text up to the body, then its members, indented.
    Container,
    /// Not shown itself; its children are looked at instead (export, decorators, templates).
    Transparent,
}

pub struct Lang {
    pub name: &'static str,
    pub extensions: &'static [&'static str],
    pub language: fn() -> Language,
    /// Node kind → (kind shown in metadata, role).
    pub nodes: &'static [(&'static str, &'static str, Role)],
}

use Role::*;

/// Nodes that hold a container's members: looked through, never shown.
pub const BODY_KINDS: &[&str] = &[
    "block",
    "body_statement",
    "class_body",
    "compound_statement",
    "constructor_body",
    "declaration_list",
    "enum_body",
    "enum_body_declarations",
    "enum_variant_list",
    "field_declaration_list",
    "interface_body",
    "interface_type",
    "object_type",
    "statement_block",
    "struct_type",
    "template_body",
];

pub static LANGS: &[Lang] = &[
    Lang {
        name: "rust",
        extensions: &["rs"],
        language: || tree_sitter_rust::LANGUAGE.into(),
        nodes: &[
            ("use_declaration", "import", Line),
            ("extern_crate_declaration", "import", Line),
            ("const_item", "const", Line),
            ("static_item", "static", Line),
            ("type_item", "type", Line),
            ("associated_type", "type", Line),
            ("function_signature_item", "function", Line),
            ("function_item", "function", Signature),
            ("macro_definition", "macro", Line),
            ("struct_item", "struct", Container),
            ("union_item", "union", Container),
            ("enum_item", "enum", Container),
            ("trait_item", "trait", Container),
            ("impl_item", "impl", Container),
            ("mod_item", "module", Container),
            ("field_declaration", "field", Line),
            ("enum_variant", "variant", Line),
        ],
    },
    Lang {
        name: "go",
        extensions: &["go"],
        language: || tree_sitter_go::LANGUAGE.into(),
        nodes: &[
            ("package_clause", "package", Line),
            ("import_declaration", "import", Line),
            ("const_declaration", "const", Line),
            ("var_declaration", "var", Line),
            ("function_declaration", "function", Signature),
            ("method_declaration", "method", Signature),
            ("type_declaration", "type", Transparent),
            ("type_spec", "type", Container),
            ("type_alias", "type", Line),
            ("field_declaration", "field", Line),
            ("method_elem", "method", Line),
            ("method_spec", "method", Line),
        ],
    },
    Lang {
        name: "python",
        extensions: &["py", "pyi"],
        language: || tree_sitter_python::LANGUAGE.into(),
        nodes: &[
            ("import_statement", "import", Line),
            ("import_from_statement", "import", Line),
            ("future_import_statement", "import", Line),
            ("decorated_definition", "decorated", Transparent),
            ("function_definition", "function", Signature),
            ("class_definition", "class", Container),
            ("expression_statement", "assignment", Line),
        ],
    },
    Lang {
        name: "javascript",
        extensions: &["js", "mjs", "cjs", "jsx"],
        language: || tree_sitter_javascript::LANGUAGE.into(),
        nodes: JS_NODES,
    },
    Lang {
        name: "typescript",
        extensions: &["ts", "mts", "cts"],
        language: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        nodes: TS_NODES,
    },
    Lang {
        name: "tsx",
        extensions: &["tsx"],
        language: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        nodes: TS_NODES,
    },
    Lang {
        name: "java",
        extensions: &["java"],
        language: || tree_sitter_java::LANGUAGE.into(),
        nodes: &[
            ("package_declaration", "package", Line),
            ("import_declaration", "import", Line),
            ("class_declaration", "class", Container),
            ("interface_declaration", "interface", Container),
            ("enum_declaration", "enum", Container),
            ("record_declaration", "record", Container),
            ("annotation_type_declaration", "annotation", Container),
            ("method_declaration", "method", Signature),
            ("constructor_declaration", "constructor", Signature),
            ("field_declaration", "field", Line),
            ("constant_declaration", "const", Line),
            ("enum_constant", "variant", Line),
        ],
    },
    Lang {
        name: "c",
        extensions: &["c", "h"],
        language: || tree_sitter_c::LANGUAGE.into(),
        nodes: C_NODES,
    },
    Lang {
        name: "cpp",
        extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++"],
        language: || tree_sitter_cpp::LANGUAGE.into(),
        nodes: &[
            ("preproc_include", "include", Line),
            ("using_declaration", "import", Line),
            ("alias_declaration", "type", Line),
            ("namespace_definition", "namespace", Container),
            ("template_declaration", "template", Transparent),
            ("class_specifier", "class", Container),
            ("struct_specifier", "struct", Container),
            ("union_specifier", "union", Container),
            ("enum_specifier", "enum", Container),
            ("type_definition", "type", Line),
            ("function_definition", "function", Signature),
            ("declaration", "declaration", Line),
            ("field_declaration", "field", Line),
            ("enumerator", "variant", Line),
        ],
    },
    Lang {
        name: "ruby",
        extensions: &["rb"],
        language: || tree_sitter_ruby::LANGUAGE.into(),
        nodes: &[
            ("class", "class", Container),
            ("module", "module", Container),
            ("method", "method", Signature),
            ("singleton_method", "method", Signature),
            ("assignment", "assignment", Line),
        ],
    },
    Lang {
        name: "bash",
        extensions: &["sh", "bash"],
        language: || tree_sitter_bash::LANGUAGE.into(),
        nodes: &[
            ("function_definition", "function", Signature),
            ("variable_assignment", "variable", Line),
            ("declaration_command", "variable", Line),
        ],
    },
];

const JS_NODES: &[(&str, &str, Role)] = &[
    ("import_statement", "import", Line),
    ("export_statement", "export", Transparent),
    ("function_declaration", "function", Signature),
    ("generator_function_declaration", "function", Signature),
    ("class_declaration", "class", Container),
    ("method_definition", "method", Signature),
    ("field_definition", "field", Line),
    ("lexical_declaration", "variable", Line),
    ("variable_declaration", "variable", Line),
];

const TS_NODES: &[(&str, &str, Role)] = &[
    ("import_statement", "import", Line),
    ("export_statement", "export", Transparent),
    ("ambient_declaration", "declare", Transparent),
    // `namespace a { … }` inside a namespace body is an expression statement.
    ("expression_statement", "statement", Transparent),
    ("function_declaration", "function", Signature),
    ("generator_function_declaration", "function", Signature),
    ("function_signature", "function", Line),
    ("class_declaration", "class", Container),
    ("abstract_class_declaration", "class", Container),
    ("interface_declaration", "interface", Container),
    ("enum_declaration", "enum", Container),
    ("internal_module", "namespace", Container),
    ("module", "namespace", Container),
    ("type_alias_declaration", "type", Line),
    ("method_definition", "method", Signature),
    ("abstract_method_signature", "method", Line),
    ("method_signature", "method", Line),
    ("property_signature", "field", Line),
    ("public_field_definition", "field", Line),
    ("enum_assignment", "variant", Line),
    ("property_identifier", "variant", Line),
    ("lexical_declaration", "variable", Line),
    ("variable_declaration", "variable", Line),
];

const C_NODES: &[(&str, &str, Role)] = &[
    ("preproc_include", "include", Line),
    ("preproc_def", "macro", Line),
    ("preproc_function_def", "macro", Line),
    ("struct_specifier", "struct", Container),
    ("union_specifier", "union", Container),
    ("enum_specifier", "enum", Container),
    ("type_definition", "type", Line),
    ("function_definition", "function", Signature),
    ("declaration", "declaration", Line),
    ("field_declaration", "field", Line),
    ("enumerator", "variant", Line),
];

/// The language an extension names.
pub fn for_extension(ext: &str) -> Option<&'static Lang> {
    let ext = ext.to_ascii_lowercase();
    LANGS.iter().find(|l| l.extensions.contains(&ext.as_str()))
}

/// Every extension, for the refusal message.
pub fn all_extensions() -> Vec<&'static str> {
    LANGS
        .iter()
        .flat_map(|l| l.extensions.iter().copied())
        .collect()
}
