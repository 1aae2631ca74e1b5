#include "runners.h"

int main(int argc, char** argv) { return cdc::ack::RunCli(argc, argv); }
