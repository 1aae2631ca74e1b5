#include "runners.h"

int main(int argc, char** argv) { return cdc::tail::RunCli(argc, argv); }
