//! The `dcsim` binary: parses the command line and hands it to [`dcsim_cli::execute`].
//! Every error is printed as `error: ...` on stderr with exit status 2 (clap's usage errors
//! also exit with 2).

use clap::Parser;

fn main() {
    let cli = dcsim_cli::Cli::parse();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let result = dcsim_cli::execute(cli, &mut stdout.lock(), &mut stderr.lock());
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
