//! The `dcsim` binary: parses the command line and hands it to [`dcsim_cli::execute`].
//! Every error is printed as `error: ...` on stderr with exit status 2 (clap's usage errors
//! also exit with 2). Stopped by SIGINT, SIGTERM or SIGHUP, it removes its unfinished outputs
//! and ends by the signal ([`dcsim_cli::interrupt`]).

use clap::Parser;

fn main() {
    // Before any thread starts: a signal then removes the unfinished outputs.
    dcsim_cli::interrupt::install();
    let cli = dcsim_cli::Cli::parse();
    // Unlocked handles: progress bars draw to stderr from worker threads, so holding the
    // stderr lock here for the whole command would deadlock them in a terminal.
    let result = dcsim_cli::execute(cli, &mut std::io::stdout(), &mut std::io::stderr());
    if let Err(e) = result {
        // An output folder made for a command that failed, and still empty, goes.
        dcsim_cli::output::PENDING.remove_empty_folders();
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
