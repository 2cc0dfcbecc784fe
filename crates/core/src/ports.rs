//! The three little strings every element class declares: port count,
//! processing code and flow code (Click's `port_count()`, `processing()`,
//! `flow_code()`).

/// Allowed number of ports on one side: `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    pub lo: usize,
    pub hi: usize,
}

/// A parsed port-count string such as `1/1-2`, `-/=` or `1/=+`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortCount {
    pub inputs: PortRange,
    /// `Some(k)` when the output side is `=` followed by k `+`: as many
    /// outputs as inputs, plus k.
    pub outputs_equal_plus: Option<usize>,
    pub outputs: PortRange,
}

const UNBOUNDED: usize = usize::MAX;

fn parse_side(s: &str) -> Option<PortRange> {
    let num = |t: &str| -> Option<usize> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            t.parse().ok()
        }
    };
    if s == "-" {
        return Some(PortRange {
            lo: 0,
            hi: UNBOUNDED,
        });
    }
    if let Some((a, b)) = s.split_once('-') {
        let lo = if a.is_empty() { 0 } else { num(a)? };
        let hi = if b.is_empty() { UNBOUNDED } else { num(b)? };
        if lo > hi {
            return None;
        }
        return Some(PortRange { lo, hi });
    }
    let n = num(s)?;
    Some(PortRange { lo: n, hi: n })
}

impl PortCount {
    pub fn parse(s: &str) -> Option<PortCount> {
        let (i, o) = match s.split_once('/') {
            Some((i, o)) => (i, o),
            None => (s, s),
        };
        let inputs = parse_side(i)?;
        if let Some(pluses) = o.strip_prefix('=') {
            if !pluses.bytes().all(|b| b == b'+') {
                return None;
            }
            return Some(PortCount {
                inputs,
                outputs_equal_plus: Some(pluses.len()),
                outputs: PortRange {
                    lo: 0,
                    hi: UNBOUNDED,
                },
            });
        }
        Some(PortCount {
            inputs,
            outputs_equal_plus: None,
            outputs: parse_side(o)?,
        })
    }

    /// The allowed output range once the number of inputs is known.
    pub fn output_range(&self, ninputs: usize) -> PortRange {
        match self.outputs_equal_plus {
            Some(k) => PortRange {
                lo: ninputs + k,
                hi: ninputs + k,
            },
            None => self.outputs,
        }
    }
}

/// A port's processing mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Push,
    Pull,
    Agnostic,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Push => "push",
            Mode::Pull => "pull",
            Mode::Agnostic => "agnostic",
        }
    }
}

/// A parsed processing code such as `a/ah` or `h/l`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Processing {
    inputs: Vec<Mode>,
    outputs: Vec<Mode>,
}

fn parse_modes(s: &str) -> Option<Vec<Mode>> {
    let v: Option<Vec<Mode>> = s
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            'h' => Some(Mode::Push),
            'l' => Some(Mode::Pull),
            'a' => Some(Mode::Agnostic),
            _ => None,
        })
        .collect();
    v.filter(|v| !v.is_empty())
}

impl Processing {
    pub fn parse(s: &str) -> Option<Processing> {
        let (i, o) = s.split_once('/').unwrap_or((s, s));
        Some(Processing {
            inputs: parse_modes(i)?,
            outputs: parse_modes(o)?,
        })
    }

    /// The last letter of each side repeats for further ports.
    pub fn input(&self, port: usize) -> Mode {
        *self
            .inputs
            .get(port)
            .unwrap_or_else(|| self.inputs.last().unwrap_or(&Mode::Agnostic))
    }

    pub fn output(&self, port: usize) -> Mode {
        *self
            .outputs
            .get(port)
            .unwrap_or_else(|| self.outputs.last().unwrap_or(&Mode::Agnostic))
    }
}

/// One port's flow code: a set of letters, possibly negated, or `#`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum FlowItem {
    Set { negated: bool, letters: Vec<char> },
    Same,
}

/// A parsed flow code such as `x/x`, `xy/x` or `#/[^#]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowCode {
    inputs: Vec<FlowItem>,
    outputs: Vec<FlowItem>,
}

fn parse_flow_side(s: &str) -> Option<Vec<FlowItem>> {
    let mut items = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' => items.push(FlowItem::Same),
            '[' => {
                let negated = chars.peek() == Some(&'^');
                if negated {
                    chars.next();
                }
                let mut letters = Vec::new();
                loop {
                    match chars.next()? {
                        ']' => break,
                        l => letters.push(l),
                    }
                }
                items.push(FlowItem::Set { negated, letters });
            }
            c if c.is_ascii_alphabetic() => items.push(FlowItem::Set {
                negated: false,
                letters: vec![c],
            }),
            _ => return None,
        }
    }
    (!items.is_empty()).then_some(items)
}

impl FlowCode {
    pub fn parse(s: &str) -> Option<FlowCode> {
        let (i, o) = s.split_once('/').unwrap_or((s, s));
        Some(FlowCode {
            inputs: parse_flow_side(i)?,
            outputs: parse_flow_side(o)?,
        })
    }

    fn item(side: &[FlowItem], port: usize) -> &FlowItem {
        side.get(port)
            .unwrap_or_else(|| side.last().expect("flow side is never empty"))
    }

    /// Whether packets arriving on `input` may leave on `output`.
    pub fn flows(&self, input: usize, output: usize) -> bool {
        let a = Self::item(&self.inputs, input);
        let b = Self::item(&self.outputs, output);
        // '#' stands for "this port's own number", so the candidate members
        // are the letters, the two ports' numbers, and any third port.
        let other = (0..3).find(|p| *p != input && *p != output).unwrap_or(0);
        let candidates = ('a'..='z').chain('A'..='Z').map(Member::Letter).chain([
            Member::Port(input),
            Member::Port(output),
            Member::Port(other),
        ]);
        for m in candidates {
            if contains(a, input, m) && contains(b, output, m) {
                return true;
            }
        }
        false
    }
}

#[derive(Clone, Copy)]
enum Member {
    Letter(char),
    Port(usize),
}

fn contains(item: &FlowItem, port: usize, m: Member) -> bool {
    let in_letters = |letters: &[char]| match m {
        Member::Letter(c) => letters.contains(&c),
        Member::Port(p) => p == port && letters.contains(&'#'),
    };
    match item {
        FlowItem::Same => matches!(m, Member::Port(p) if p == port),
        FlowItem::Set { negated, letters } => in_letters(letters) != *negated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_counts() {
        let p = PortCount::parse("1/1-2").unwrap();
        assert_eq!(p.inputs, PortRange { lo: 1, hi: 1 });
        assert_eq!(p.outputs, PortRange { lo: 1, hi: 2 });
        let p = PortCount::parse("-/=").unwrap();
        assert_eq!(p.output_range(3), PortRange { lo: 3, hi: 3 });
        let p = PortCount::parse("1/=+").unwrap();
        assert_eq!(p.output_range(1), PortRange { lo: 2, hi: 2 });
        let p = PortCount::parse("1-/1").unwrap();
        assert_eq!(p.inputs.hi, UNBOUNDED);
        let p = PortCount::parse("-2").unwrap();
        assert_eq!(p.inputs, PortRange { lo: 0, hi: 2 });
        assert!(PortCount::parse("x/1").is_none());
        assert!(PortCount::parse("3-1").is_none());
        assert_eq!(
            PortCount::parse("2").unwrap().outputs,
            PortRange { lo: 2, hi: 2 }
        );
    }

    #[test]
    fn processing_codes_repeat_last() {
        let p = Processing::parse("a/ah").unwrap();
        assert_eq!(p.input(0), Mode::Agnostic);
        assert_eq!(p.output(0), Mode::Agnostic);
        assert_eq!(p.output(1), Mode::Push);
        assert_eq!(p.output(5), Mode::Push);
        assert!(Processing::parse("q/h").is_none());
    }

    #[test]
    fn flow_codes() {
        let f = FlowCode::parse("x/x").unwrap();
        assert!(f.flows(0, 3));
        let f = FlowCode::parse("x/y").unwrap();
        assert!(!f.flows(0, 0));
        let f = FlowCode::parse("xy/x").unwrap();
        assert!(f.flows(0, 0) && !f.flows(1, 0));
        let f = FlowCode::parse("#/#").unwrap();
        assert!(f.flows(2, 2) && !f.flows(1, 2));
        let f = FlowCode::parse("#/[^#]").unwrap();
        assert!(!f.flows(1, 1) && f.flows(1, 0) && f.flows(0, 4));
        assert!(FlowCode::parse("x/[ab").is_none());
    }
}
