//! Brace expansion, as the shell does it before anything else.

/// How many words one brace expansion may make: enough for any command a person writes, and a line
/// built to explode (`{a,b}{a,b}...`) stays small. Beyond it the first ones are judged, and the rest as
/// the word unexpanded.
const MAX_BRACE_WORDS: usize = 256;

/// A word with unquoted braces at `braces` (byte offsets of `{`, `,` and `}` in `text`) expanded as the
/// shell does before anything else: `a{b,c}d` is `abd acd`, `{1..3}` is `1 2 3`, nested ones too (found
/// attacking the guard: `mv ~/.config/hookd{,.off}` named no guarded path as written). A word too long
/// to expand cheaply is kept as it is.
pub(super) fn brace_expand(text: &str, braces: &[usize]) -> Vec<String> {
    if text.len() > 4096 {
        return vec![text.to_string()];
    }
    let marked: Vec<(char, bool)> = text
        .char_indices()
        .map(|(at, c)| (c, braces.binary_search(&at).is_ok()))
        .collect();
    let mut out = Vec::new();
    expand_braces(marked, &mut out);
    if out.len() >= MAX_BRACE_WORDS {
        out.push(text.to_string());
    }
    out
}

fn expand_braces(word: Vec<(char, bool)>, out: &mut Vec<String>) {
    if out.len() >= MAX_BRACE_WORDS {
        return;
    }
    // Each `{` with its `}` and the commas between them at its own level, in one pass.
    let mut open_at = Vec::new();
    let mut pairs: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    let mut commas_of: Vec<Vec<usize>> = Vec::new();
    for (k, item) in word.iter().enumerate() {
        match *item {
            ('{', true) => {
                open_at.push(k);
                commas_of.push(Vec::new());
            }
            ('}', true) => {
                if let (Some(open), Some(commas)) = (open_at.pop(), commas_of.pop()) {
                    pairs.push((open, k, commas));
                }
            }
            (',', true) => {
                if let Some(commas) = commas_of.last_mut() {
                    commas.push(k);
                }
            }
            _ => {}
        }
    }
    pairs.sort_by_key(|(open, _, _)| *open);
    for (open, close, commas) in pairs {
        let alternatives: Vec<Vec<(char, bool)>> = if commas.is_empty() {
            let inside: String = word[open + 1..close].iter().map(|(c, _)| *c).collect();
            match sequence(&inside) {
                Some(items) => items
                    .into_iter()
                    .map(|item| item.chars().map(|c| (c, false)).collect())
                    .collect(),
                None => continue,
            }
        } else {
            let mut bounds = vec![open];
            bounds.extend(&commas);
            bounds.push(close);
            bounds
                .windows(2)
                .map(|w| word[w[0] + 1..w[1]].to_vec())
                .collect()
        };
        for alternative in alternatives {
            let mut next = word[..open].to_vec();
            next.extend(alternative);
            next.extend_from_slice(&word[close + 1..]);
            expand_braces(next, out);
            if out.len() >= MAX_BRACE_WORDS {
                return;
            }
        }
        return;
    }
    out.push(word.into_iter().map(|(c, _)| c).collect());
}

/// `1..5`, `a..e`, `10..1..2`: the items of a brace sequence (at most [`MAX_BRACE_WORDS`]).
fn sequence(inside: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inside.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let step = match parts.get(2) {
        Some(step) => step.parse::<i64>().ok()?.unsigned_abs().max(1),
        None => 1,
    };
    let (from, to, letters) = match (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => {
            let a = single_char(parts[0])?;
            let b = single_char(parts[1])?;
            (i64::from(u32::from(a)), i64::from(u32::from(b)), true)
        }
    };
    let mut items = Vec::new();
    let mut at = from;
    loop {
        let item = if letters {
            char::from_u32(u32::try_from(at).ok()?)?.to_string()
        } else {
            at.to_string()
        };
        items.push(item);
        if at == to || items.len() >= MAX_BRACE_WORDS {
            break;
        }
        let next = if from <= to {
            at.checked_add(i64::try_from(step).ok()?)?
        } else {
            at.checked_sub(i64::try_from(step).ok()?)?
        };
        if (from <= to && next > to) || (from > to && next < to) {
            break;
        }
        at = next;
    }
    Some(items)
}

fn single_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let c = chars.next().filter(char::is_ascii_alphabetic)?;
    chars.next().is_none().then_some(c)
}
