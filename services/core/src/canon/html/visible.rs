//! The text a reader sees in a piece of HTML source: what evidence quotes from a page,
//! cut anywhere (inside a tag, between two paragraphs), shown without its markup.

use super::{lexer, RunKind};

/// The visible text of `fragment`, a piece of HTML source cut anywhere: markup and the
/// content of scripts and styles dropped, character references decoded, each run of white
/// space (a paragraph boundary included) read as one space. The rest of a tag cut at the
/// start of the piece (`ef="/b/2">第二章`) is dropped, and so is a tag cut at its end.
pub fn visible_text(fragment: &str) -> String {
    let fragment = &fragment[tag_rest(fragment)..];
    let doc = lexer::parse(fragment, false);
    let mut out = String::with_capacity(fragment.len());
    let mut space = false;
    let mut push = |out: &mut String, c: char| {
        if c.is_whitespace() {
            space = !out.is_empty();
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    };
    for para in &doc.paras {
        let runs = doc.runs.get(para.runs.start as usize..para.runs.end as usize).unwrap_or(&[]);
        for run in runs {
            match run.kind {
                RunKind::Text | RunKind::Pre => {
                    let text = fragment.get(run.start as usize..run.end as usize).unwrap_or("");
                    text.chars().for_each(|c| push(&mut out, c));
                }
                RunKind::Chars(a, b) => {
                    push(&mut out, a);
                    if let Some(b) = b {
                        push(&mut out, b);
                    }
                }
                RunKind::Deleted => {}
            }
        }
        push(&mut out, ' ');
    }
    out
}

/// Where the text of `fragment` starts when it begins inside a tag: just after the `>`
/// that closes it, when what comes before that `>` can only be the tail of a tag (ASCII,
/// no `<`, and either an attribute's `=` or quote, or nothing but a name). A `>` in
/// ordinary text (`首页 > 小说`) is left alone.
fn tag_rest(fragment: &str) -> usize {
    let Some(gt) = fragment.find('>') else { return 0 };
    let head = &fragment[..gt];
    let tail_of_tag = head.is_ascii()
        && !head.contains('<')
        && (head.contains('=')
            || head.contains('"')
            || head.contains('\'')
            || head.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b':')));
    if tail_of_tag {
        gt + 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_dropped_and_references_decoded() {
        let src =
            "</a></li></ul></div><h1>第一回</h1><p>宴桃园豪杰&nbsp;三结义&#65292;斩黄巾</p><script>var x = 1;</script>";
        assert_eq!(visible_text(src), "第一回 宴桃园豪杰 三结义，斩黄巾");
    }

    #[test]
    fn a_tag_cut_at_either_end_is_dropped() {
        assert_eq!(visible_text(r#"ef="/book/2.html">第二章</a><a hr"#), "第二章");
        assert_eq!(visible_text("iv><p>正文</p>"), "正文");
        assert_eq!(visible_text("<p>正文</p><div class=\"ad\""), "正文");
    }

    #[test]
    fn text_is_kept_as_it_is() {
        assert_eq!(visible_text("首页 > 小说 > 三国演义"), "首页 > 小说 > 三国演义");
        assert_eq!(visible_text("话说天下大势，\n\n  分久必合"), "话说天下大势， 分久必合");
        assert_eq!(visible_text(""), "");
    }
}
