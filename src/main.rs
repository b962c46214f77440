// Temporary driver for `lower` while the CLI is being written on its own branch.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() >= 3 && args[1] == "lower" {
        let src = std::fs::read_to_string(&args[2]).expect("read");
        let cpu = args.get(4).map(|s| s == "cpu").unwrap_or(false);
        match pairpipe::lower::lower_file(&src, &args[2], cpu, !cpu) {
            Ok(l) => print!(
                "{}",
                if cpu {
                    l.cpu.unwrap().module
                } else {
                    l.cuda.unwrap().module
                }
            ),
            Err(e) => {
                eprintln!("{}:{e}", args[2]);
                std::process::exit(2);
            }
        }
    }
}
