from labwright.cli import main

main()
