#[test]
fn dump_cases() {
    let cases = std::fs::read_to_string("/tmp/sk/cases.txt").unwrap();
    for line in cases.lines() {
        let (d, s) = line.split_once(' ').unwrap();
        let s = s.replace("\\n", "\n");
        let dialect = if d == "bash" { super::Dialect::Bash } else { super::Dialect::Sh };
        let a = super::analyze::analyze(&s, dialect);
        let t = super::keys::command_targets(&a);
        let w: Vec<String> = a.writes.iter().map(|w| w.shown()).collect();
        let r: Vec<String> = a.reads.iter().map(|w| w.shown()).collect();
        println!("{d} {s:?} => {t:?} w={w:?} r={r:?}");
    }
}
