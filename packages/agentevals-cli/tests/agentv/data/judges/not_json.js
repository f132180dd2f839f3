// Prints a verdict in prose instead of JSON.
process.stdin.resume();
process.stdin.on('end', () => console.log('Looks good to me, score 0.9'));
