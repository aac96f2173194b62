//! HTML to text for fetch_url, within a depth bound.
//!
//! Owns: the one way a fetched page is rendered. html5ever's tokenizer and tree builder do not
//! recurse, but the tree builder checks its stack of open elements on every tag (quadratic in
//! the depth), and html2text drops its render tree (and sizes tables) by recursion: a page of
//! `<div>` nested 100,000 deep (600 KB) overflowed the rendering thread's stack and ended the
//! process, and ran for minutes before that. So the page is parsed here, a chunk at a time,
//! into html2text's DOM through [`DepthSink`], which measures the depth of every element as it
//! is attached; a page deeper than [`MAX_HTML_DEPTH`] stops being parsed at the end of that
//! chunk and is shown as its source with a note.
//!
//! Key decision: measure the tree html5ever builds, not the text. The tree builder closes,
//! reopens and ignores tags by the HTML standard's rules (a stray `</span>` closes nothing,
//! formatting elements are reopened without a tag in the text); a count over the text would
//! have to agree with all of them, and every disagreement would be a way under the bound.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use html2text::{Handle, RcDom};
use html5ever::tendril::{ByteTendril, StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeBuilderOpts, TreeSink};
use html5ever::{Attribute, ExpandedName, ParseOpts, QualName};

/// Deepest element nesting rendered; a deeper page is shown as its source.
pub const MAX_HTML_DEPTH: usize = 512;
/// Most elements rendered; the parse stops at the first chunk past it and what was read is
/// rendered. html2text holds about 2 KiB per element (DOM, render tree, text): a 16 MiB page of
/// 1.2 million `<span>`s took 2.6 GB before this bound.
pub const MAX_HTML_ELEMENTS: usize = 100_000;
/// Bytes handed to the parser between two checks: at most a few thousand elements more.
const CHUNK_BYTES: usize = 4096;

/// The text of an HTML page at `width` columns; its source (lossily decoded) when it nests
/// deeper than [`MAX_HTML_DEPTH`] or the renderer fails.
pub fn render(bytes: &[u8], width: usize) -> String {
    let source = || String::from_utf8_lossy(bytes).into_owned();
    let (dom, cut) = match parse_bounded(bytes) {
        Parsed::TooDeep => {
            return format!(
                "[fetch_url: the page nests elements more than {MAX_HTML_DEPTH} deep, so it is \
                 shown as HTML source]\n{}",
                source()
            );
        }
        Parsed::Whole(dom) => (dom, false),
        Parsed::Cut(dom) => (dom, true),
    };
    let config = html2text::config::plain();
    let Ok(text) = config
        .dom_to_render_tree(&dom)
        .and_then(|tree| config.render_to_string(tree, width))
    else {
        return source();
    };
    if cut {
        format!(
            "[fetch_url: the page has more than {MAX_HTML_ELEMENTS} elements; only its \
             beginning is rendered here. Pass raw: true for the whole source]\n{text}"
        )
    } else {
        text
    }
}

/// What parsing a page gave.
enum Parsed {
    Whole(RcDom),
    /// The first [`MAX_HTML_ELEMENTS`] elements or so: the parse stopped there.
    Cut(RcDom),
    /// Some element lies deeper than [`MAX_HTML_DEPTH`].
    TooDeep,
}

/// The DOM of `bytes` as html2text parses it (scripting off), within [`MAX_HTML_DEPTH`] and
/// [`MAX_HTML_ELEMENTS`].
fn parse_bounded(bytes: &[u8]) -> Parsed {
    let too_deep = Rc::new(Cell::new(false));
    let elements = Rc::new(Cell::new(0usize));
    let sink = DepthSink {
        dom: RcDom::default(),
        templates: RefCell::new(HashMap::new()),
        too_deep: Rc::clone(&too_deep),
        elements: Rc::clone(&elements),
    };
    let opts = ParseOpts {
        tree_builder: TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut parser = html5ever::parse_document(sink, opts).from_utf8();
    let mut cut = false;
    for chunk in bytes.chunks(CHUNK_BYTES) {
        parser.process(ByteTendril::from_slice(chunk));
        if too_deep.get() {
            return Parsed::TooDeep;
        }
        if elements.get() > MAX_HTML_ELEMENTS {
            cut = true;
            break;
        }
    }
    let dom = parser.finish();
    // The checks above see every element attached; a subtree the tree builder moved under a
    // new parent (misnested formatting) is measured here, on the whole tree, without recursion.
    if too_deep.get() || deeper_than(&dom.document, MAX_HTML_DEPTH) {
        Parsed::TooDeep
    } else if cut {
        Parsed::Cut(dom)
    } else {
        Parsed::Whole(dom)
    }
}

/// Whether any node under `root` lies deeper than `limit`, found with a stack on the heap.
fn deeper_than(root: &Handle, limit: usize) -> bool {
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        stack.extend(
            node.children
                .borrow()
                .iter()
                .map(|c| (c.clone(), depth + 1)),
        );
        if let html2text::Element {
            template_contents, ..
        } = &node.data
            && let Some(contents) = template_contents.borrow().as_ref()
        {
            stack.push((contents.clone(), depth + 1));
        }
    }
    false
}

/// html2text's DOM, with the depth of every element checked as it is attached.
struct DepthSink {
    dom: RcDom,
    /// A template's contents fragment (by address) → the template: the fragment has no parent,
    /// but the tree builder's stack runs through it.
    templates: RefCell<HashMap<usize, Handle>>,
    too_deep: Rc<Cell<bool>>,
    /// Elements created so far.
    elements: Rc<Cell<usize>>,
}

impl DepthSink {
    /// Record whether a node attached under `parent` lies deeper than [`MAX_HTML_DEPTH`],
    /// walking at most that many parents up (never recursing).
    fn check(&self, parent: &Handle) {
        if self.too_deep.get() {
            return;
        }
        let mut current = parent.clone();
        for _ in 0..MAX_HTML_DEPTH {
            let up = current.parent.take();
            current.parent.set(up.clone());
            let next = match up.and_then(|weak| weak.upgrade()) {
                Some(p) => p,
                None => match self
                    .templates
                    .borrow()
                    .get(&(Rc::as_ptr(&current) as usize))
                {
                    Some(template) => template.clone(),
                    None => return,
                },
            };
            current = next;
        }
        self.too_deep.set(true);
    }

    /// The parent `sibling` has (the node a foster-parented one joins).
    fn parent_of(node: &Handle) -> Option<Handle> {
        let up = node.parent.take();
        node.parent.set(up.clone());
        up.and_then(|weak| weak.upgrade())
    }
}

impl TreeSink for DepthSink {
    type Handle = Handle;
    type Output = RcDom;
    type ElemName<'a> = ExpandedName<'a>;

    fn finish(self) -> RcDom {
        self.dom
    }

    fn parse_error(&self, msg: Cow<'static, str>) {
        self.dom.parse_error(msg);
    }

    fn get_document(&self) -> Handle {
        self.dom.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a Handle) -> ExpandedName<'a> {
        self.dom.elem_name(target)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.elements.set(self.elements.get() + 1);
        self.dom.create_element(name, attrs, flags)
    }

    fn create_comment(&self, text: StrTendril) -> Handle {
        self.dom.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        self.dom.create_pi(target, data)
    }

    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        if matches!(child, NodeOrText::AppendNode(_)) {
            self.check(parent);
        }
        self.dom.append(parent, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        if matches!(child, NodeOrText::AppendNode(_)) {
            match Self::parent_of(element) {
                Some(parent) => self.check(&parent),
                None => self.check(prev_element),
            }
        }
        self.dom
            .append_based_on_parent_node(element, prev_element, child);
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.dom
            .append_doctype_to_document(name, public_id, system_id);
    }

    fn mark_script_already_started(&self, node: &Handle) {
        self.dom.mark_script_already_started(node);
    }

    fn pop(&self, node: &Handle) {
        self.dom.pop(node);
    }

    fn get_template_contents(&self, target: &Handle) -> Handle {
        let contents = self.dom.get_template_contents(target);
        self.templates
            .borrow_mut()
            .insert(Rc::as_ptr(&contents) as usize, target.clone());
        contents
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        if matches!(new_node, NodeOrText::AppendNode(_))
            && let Some(parent) = Self::parent_of(sibling)
        {
            self.check(&parent);
        }
        self.dom.append_before_sibling(sibling, new_node);
    }

    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        self.dom.add_attrs_if_missing(target, attrs);
    }

    fn associate_with_form(
        &self,
        target: &Handle,
        form: &Handle,
        nodes: (&Handle, Option<&Handle>),
    ) {
        self.dom.associate_with_form(target, form, nodes);
    }

    fn remove_from_parent(&self, target: &Handle) {
        self.dom.remove_from_parent(target);
    }

    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        self.check(new_parent);
        self.dom.reparent_children(node, new_parent);
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &Handle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }

    fn set_current_line(&self, line_number: u64) {
        self.dom.set_current_line(line_number);
    }

    fn allow_declarative_shadow_roots(&self, intended_parent: &Handle) -> bool {
        self.dom.allow_declarative_shadow_roots(intended_parent)
    }

    fn attach_declarative_shadow(
        &self,
        location: &Handle,
        template: &Handle,
        attrs: &[Attribute],
    ) -> bool {
        self.dom
            .attach_declarative_shadow(location, template, attrs)
    }

    fn maybe_clone_an_option_into_selectedcontent(&self, option: &Handle) {
        self.dom.maybe_clone_an_option_into_selectedcontent(option);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within the bound the text is exactly what html2text renders on its own.
    #[test]
    fn shallow_pages_render_as_html2text_does() {
        let pages = [
            "<html><head><title>T</title><style>p{}</style></head><body><h1>Head</h1>\
             <p>Text with <a href=\"https://example.com/x\">a link</a> and <b>bold</b>.</p>\
             <ul><li>one<li>two<ol><li>inner</ol></ul>\
             <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
             <pre>  kept\n  as is</pre><blockquote>quoted</blockquote>\
             <template><p>hidden</p></template><img alt=\"pic\" src=\"p.png\"></body></html>",
            "<p>unclosed <b>misnested <i>tags</b> here</i> and <table><div>fostered</div>",
            "",
            "plain text, no tags",
        ];
        for page in pages {
            let want = html2text::from_read(page.as_bytes(), 80).expect("html2text renders it");
            assert_eq!(render(page.as_bytes(), 80), want, "{page}");
        }
    }

    /// Depth counts every element on the way, templates' contents included.
    #[test]
    fn depth_is_measured_through_templates_and_misnesting() {
        for (open, close) in [
            ("<div>", "</div>"),
            ("<template>", "</template>"),
            ("<b><i>", "</b></i>"),
            ("<table><tr><td>", "</td></tr></table>"),
        ] {
            let shallow = format!("{}x{}", open.repeat(10), close.repeat(10));
            assert!(
                matches!(parse_bounded(shallow.as_bytes()), Parsed::Whole(_)),
                "{open} 10"
            );
            let deep = format!(
                "{}x{}",
                open.repeat(MAX_HTML_DEPTH),
                close.repeat(MAX_HTML_DEPTH)
            );
            assert!(
                matches!(parse_bounded(deep.as_bytes()), Parsed::TooDeep),
                "{open} {MAX_HTML_DEPTH}"
            );
        }
    }

    /// A page of more elements than the bound renders its beginning, with a note.
    #[test]
    fn a_page_past_the_element_bound_renders_its_beginning() {
        let page: String = (0..MAX_HTML_ELEMENTS + 10_000)
            .map(|i| format!("<span>w{i}</span>"))
            .collect();
        let text = render(page.as_bytes(), 80);
        assert!(
            text.starts_with("[fetch_url: the page has more than"),
            "{text:.200}"
        );
        assert!(text.contains("w0w1w2"), "{text:.200}");
        assert!(!text.contains(&format!("w{}", MAX_HTML_ELEMENTS + 9_999)));
    }
}
