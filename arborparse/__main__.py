from arborparse.cli import main

main()
