from finrag.cli.app import main

main()
